// The overview's volume chart: a small SVG bar chart (no inline style, colours from CSS classes). Bar heights are
// display-only geometry; amounts are shown as the API's decimal strings in the table beside it.
export interface Bar {
  label: string;
  value: number;
  title: string;
}

export function BarChart({ bars, label }: { bars: Bar[]; label: string }) {
  const width = 600;
  const height = 160;
  const max = Math.max(1, ...bars.map((b) => b.value));
  const slot = bars.length ? width / bars.length : width;
  return (
    <svg class="chart" viewBox={`0 0 ${width} ${height + 20}`} role="img" aria-label={label} data-testid="overview-chart">
      <title>{label}</title>
      {bars.map((b, i) => {
        const h = Math.round((b.value / max) * height);
        return (
          <g key={b.label}>
            <rect class="chart-bar" x={i * slot + 2} y={height - h} width={Math.max(1, slot - 4)} height={h}>
              <title>{b.title}</title>
            </rect>
            {i % Math.ceil(bars.length / 6 || 1) === 0 ? (
              <text class="chart-label" x={i * slot + 2} y={height + 14}>
                {b.label}
              </text>
            ) : null}
          </g>
        );
      })}
      <line class="chart-axis" x1={0} y1={height} x2={width} y2={height} />
    </svg>
  );
}
