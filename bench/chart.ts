/**
 * The one chart of the report: plan time against entry count, both implementations, pull and
 * push, on log-log axes. Hand-written SVG (no scripts, no external fonts or styles) so it renders
 * as a plain image on a code host.
 *
 * @module
 */

/** One line of the chart. */
export interface Series {
  /** Legend text. */
  label: string;
  /** Stroke colour. */
  color: string;
  /** Dashed line (the TypeScript baseline). */
  dashed: boolean;
  /** Points: entry count and milliseconds. */
  points: [number, number][];
}

const W = 720;
const H = 440;
const M = { left: 80, right: 200, top: 50, bottom: 60 };

function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * Renders the chart.
 *
 * @param title chart title
 * @param series the lines
 */
export function planTimeSvg(title: string, series: Series[]): string {
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1]));
  const xMin = Math.floor(Math.log10(Math.min(...xs)));
  const xMax = Math.ceil(Math.log10(Math.max(...xs)));
  const yMin = Math.floor(Math.log10(Math.max(Math.min(...ys), 0.1)));
  const yMax = Math.ceil(Math.log10(Math.max(...ys)));
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const x = (v: number) => M.left + ((Math.log10(v) - xMin) / (xMax - xMin || 1)) * plotW;
  const y = (v: number) => M.top + plotH - ((Math.log10(v) - yMin) / (yMax - yMin || 1)) * plotH;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ` +
      `font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${M.left}" y="28" font-size="15" font-weight="bold">${escape(title)}</text>`,
  );
  // Grid and ticks: one line per decade on both axes.
  for (let e = xMin; e <= xMax; e++) {
    const px = x(10 ** e);
    out.push(
      `<line x1="${px}" y1="${M.top}" x2="${px}" y2="${M.top + plotH}" stroke="#e0e0e0"/>`,
      `<text x="${px}" y="${M.top + plotH + 18}" text-anchor="middle">10^${e}</text>`,
    );
  }
  for (let e = yMin; e <= yMax; e++) {
    const py = y(10 ** e);
    const label = 10 ** e >= 1000 ? `${10 ** e / 1000} s` : `${10 ** e} ms`;
    out.push(
      `<line x1="${M.left}" y1="${py}" x2="${M.left + plotW}" y2="${py}" stroke="#e0e0e0"/>`,
      `<text x="${M.left - 8}" y="${py + 4}" text-anchor="end">${label}</text>`,
    );
  }
  out.push(
    `<rect x="${M.left}" y="${M.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`,
    `<text x="${M.left + plotW / 2}" y="${H - 18}" text-anchor="middle">index entries (log)</text>`,
    `<text x="20" y="${M.top + plotH / 2}" text-anchor="middle" ` +
      `transform="rotate(-90 20 ${M.top + plotH / 2})">median plan time (log)</text>`,
  );
  series.forEach((s, i) => {
    const dash = s.dashed ? ` stroke-dasharray="6 4"` : "";
    const path = s.points.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
    out.push(
      `<polyline points="${path}" fill="none" stroke="${s.color}" stroke-width="2"${dash}/>`,
      ...s.points.map((p) =>
        `<circle cx="${x(p[0]).toFixed(1)}" cy="${y(p[1]).toFixed(1)}" r="3.5" fill="${s.color}"/>`
      ),
    );
    const ly = M.top + 10 + i * 22;
    const lx = M.left + plotW + 16;
    out.push(
      `<line x1="${lx}" y1="${ly}" x2="${
        lx + 28
      }" y2="${ly}" stroke="${s.color}" stroke-width="2"${dash}/>`,
      `<text x="${lx + 36}" y="${ly + 4}">${escape(s.label)}</text>`,
    );
  });
  out.push(`</svg>`);
  return out.join("\n") + "\n";
}
