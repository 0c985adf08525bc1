import pg from 'pg';

/**
 * Creates the configured database when it does not exist yet (a newcomer's first start), connecting to the
 * server's `postgres` database to do so. Answers whether it created it. Any other connection error is thrown.
 */
export async function ensureDatabase(connectionString: string): Promise<boolean> {
  const probe = new pg.Client({ connectionString });
  try {
    await probe.connect();
    return false;
  } catch (err) {
    if ((err as { code?: string }).code !== '3D000') throw err;
  } finally {
    await probe.end().catch(() => {});
  }
  const url = new URL(connectionString);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(`create database "${name.replaceAll('"', '""')}"`);
  } catch (err) {
    if ((err as { code?: string }).code !== '42P04') throw err; // created meanwhile by another process
  } finally {
    await admin.end();
  }
  return true;
}
