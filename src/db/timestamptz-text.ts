import pg from 'pg';

// A timestamptz read as text (`col::text`) turned into the ISO-8601 string pg's Date parsing and `toISOString()` would
// have given (UTC, milliseconds truncated from the microseconds, e.g. `2026-11-29T23:59:59.999Z`), without a Date: the
// exports read thousands of timestamps a second (docs/performance.md "Export"). The common shape (ISO DateStyle, a UTC
// session: `2026-11-29 23:59:59.999999+00`) is rewritten by slicing; anything else (another zone's offset, a BC date,
// a year beyond 9999, infinity) goes through the parser pg uses for timestamptz, then the same formatting as before.

const UTC_ISO = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?\+00$/;
const parseTimestamptz = pg.types.getTypeParser(1184, 'text') as (text: string) => Date | number | null;

/** The export's value of a timestamptz column read as text (`::text`); null stays null. */
export function isoFromTimestamptzText(text: string | null | undefined): string | number | null {
  if (text === null || text === undefined) return null;
  if (UTC_ISO.test(text)) {
    const whole = text.length === 22;
    const ms = whole ? '000' : `${text.slice(20, text.length - 3)}00`.slice(0, 3);
    return `${text.slice(0, 10)}T${text.slice(11, 19)}.${ms}Z`;
  }
  const v = parseTimestamptz(text);
  return v instanceof Date ? v.toISOString() : v;
}
