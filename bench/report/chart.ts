/**
 * tscuda / C as a horizontal bar chart: one glance says where tscuda stands against the
 * native baseline and which goals are missed. Absolute goals have no ratio to draw and are
 * listed as text below the bars.
 */
import {
  describeGoal,
  floorRatio,
  formatNumber,
  formatRatio,
  goalMark,
  isRatioGoal,
  meetsGoal,
  ratio,
  type BenchResults,
  type MetricResult,
} from './types.js';
import { escapeXml, niceStep } from '../../src/report/timeline-svg.js'; // private-path: the report layer's SVG helpers (report/ has no entry point), drawing, not measuring

/** Goals drawn as bars: ratios to C, and (issue 26) per-call ratios to koffi's floor. */
const barGoal = (m: MetricResult): boolean => m.goal !== null && (isRatioGoal(m.goal) || m.goal.kind === 'floor-max');
/** The ratio a bar shows: the one its goal judges. */
const barRatio = (m: MetricResult): number | null => (m.goal?.kind === 'floor-max' ? floorRatio(m) : ratio(m));

const FONT = 'system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif';
const WIDTH = 960;
const PAD = 16;
const ROW_H = 26;
const BAR_H = 14;
const RIGHT_COL = 200;
const GREEN = '#16a34a';
const RED = '#dc2626';
const GREY = '#9ca3af';
const INK = '#111827';

function textWidth(text: string, fontSize: number): number {
  return [...text].length * fontSize * 0.6;
}

const px = (v: number): string => (Math.round(v * 100) / 100).toString();

/** Axis end: covers the ratios and goals, but one far outlier must not squash every other bar. */
function axisMax(ratios: readonly number[], goals: readonly number[], plotW: number): { max: number; step: number } {
  const cap = 2.5 * Math.max(1, ...goals);
  const wanted = Math.min(cap, Math.max(1, ...ratios, ...goals)) * 1.08;
  const step = niceStep(wanted, Math.max(2, Math.floor(plotW / 80)));
  return { max: Math.ceil(wanted / step - 1e-9) * step, step };
}

function legendParts(y: number): string[] {
  const parts: string[] = [];
  let x = PAD;
  const item = (mark: string, label: string): void => {
    parts.push(
      mark.replace(/\$X/g, String(x)),
      `<text x="${x + 18}" y="${y + 9.5}" font-size="11" fill="#374151">${label}</text>`,
    );
    x += 18 + textWidth(label, 11) + 18;
  };
  item(`<rect x="$X" y="${y}" width="12" height="11" rx="2" fill="${GREEN}"/>`, 'goal met');
  item(`<rect x="$X" y="${y}" width="12" height="11" rx="2" fill="${RED}"/>`, 'goal missed');
  item(`<line x1="${x + 6}" y1="${y - 2}" x2="${x + 6}" y2="${y + 13}" stroke="${INK}" stroke-width="2.5"/>`, 'goal');
  item(
    `<line x1="${x + 6}" y1="${y - 2}" x2="${x + 6}" y2="${y + 13}" stroke="${INK}" stroke-width="1" stroke-dasharray="3 2"/>`,
    'parity with C (1.0×)',
  );
  return parts;
}

function absoluteRows(metrics: readonly MetricResult[], top: number): { parts: string[]; bottom: number } {
  if (metrics.length === 0) return { parts: [], bottom: top };
  const parts = [
    `<text x="${PAD}" y="${top + 14}" font-size="13" font-weight="600" fill="${INK}">Absolute goals</text>`,
  ];
  const nameW = Math.max(...metrics.map((m) => textWidth(m.name, 12)));
  const valueX = PAD + 20 + nameW + 110;
  let y = top + 24;
  for (const m of metrics) {
    const met = meetsGoal(m);
    const color = met === null ? GREY : met ? GREEN : RED;
    const goal = m.goal === null ? '' : `goal ${describeGoal(m.goal, m.unit)}`;
    parts.push(
      `<text x="${PAD}" y="${y + 14}" font-size="13" font-weight="700" fill="${color}">${goalMark(met)}</text>`,
      `<text x="${PAD + 20}" y="${y + 14}" font-size="12" fill="${INK}">${escapeXml(m.name)}</text>`,
      `<text x="${valueX}" y="${y + 14}" font-size="12" font-weight="600" fill="${color}" text-anchor="end">${escapeXml(m.tscuda === null ? 'not measured' : `${formatNumber(m.tscuda)} ${m.unit}`)}</text>`,
      `<text x="${valueX + 14}" y="${y + 14}" font-size="12" fill="#4b5563">${escapeXml(goal)}</text>`,
    );
    y += 20;
  }
  return { parts, bottom: y + 4 };
}

export function toRatioChartSvg(results: BenchResults): string {
  const ratioMetrics = results.metrics.filter(barGoal);
  const absMetrics = results.metrics.filter((m) => m.goal !== null && !barGoal(m));
  const labelW = Math.min(320, Math.max(140, ...ratioMetrics.map((m) => textWidth(m.name, 12) + 2 * PAD)));
  const plotX = labelW;
  const plotW = WIDTH - labelW - RIGHT_COL - PAD;
  const ratios = ratioMetrics.map(barRatio).filter((r): r is number => r !== null);
  const goals = ratioMetrics.map((m) => m.goal?.value ?? 1);
  const { max, step } = axisMax(ratios, goals, plotW);
  const xAt = (v: number): number => plotX + (Math.min(v, max) / max) * plotW;

  const top = 100;
  const backgrounds: string[] = [];
  const parts: string[] = [];
  let y = top;
  if (ratioMetrics.length === 0) {
    parts.push(
      `<text x="${WIDTH / 2}" y="${y + 16}" font-size="13" fill="#6b7280" text-anchor="middle">no ratio goals</text>`,
    );
    y += ROW_H;
  }
  const bars: string[] = [];
  ratioMetrics.forEach((m, i) => {
    const r = barRatio(m);
    const met = meetsGoal(m);
    const mid = y + ROW_H / 2;
    if (i % 2 === 0)
      backgrounds.push(`<rect x="${PAD}" y="${y}" width="${WIDTH - 2 * PAD}" height="${ROW_H}" fill="#f3f4f6"/>`);
    parts.push(
      `<text x="${labelW - 10}" y="${mid + 4}" font-size="12" fill="${INK}" text-anchor="end">${escapeXml(m.name)}</text>`,
    );
    if (r === null) {
      bars.push(
        `<text x="${plotX + 6}" y="${mid + 4}" font-size="11" font-style="italic" fill="#6b7280">not measured</text>`,
      );
    } else {
      const end = xAt(r);
      const color = met === true ? GREEN : RED;
      bars.push(
        `<rect class="bar" x="${plotX}" y="${mid - BAR_H / 2}" width="${px(Math.max(1, end - plotX))}" height="${BAR_H}" fill="${color}"><title>${escapeXml(`${m.name}: ${formatRatio(r)}`)}</title></rect>`,
      );
      if (r > max) {
        // The axis was capped: a break in the bar says it goes on.
        for (const dx of [-14, -9]) {
          bars.push(
            `<line x1="${px(end + dx)}" y1="${mid + BAR_H / 2 + 1}" x2="${px(end + dx + 5)}" y2="${mid - BAR_H / 2 - 1}" stroke="#ffffff" stroke-width="2"/>`,
          );
        }
      }
    }
    if (m.goal !== null) {
      const gx = px(xAt(m.goal.value));
      bars.push(`<line x1="${gx}" y1="${y + 3}" x2="${gx}" y2="${y + ROW_H - 3}" stroke="${INK}" stroke-width="2.5"/>`);
    }
    const color = met === null ? '#6b7280' : met ? GREEN : RED;
    const colX = WIDTH - PAD - RIGHT_COL + 12;
    parts.push(
      `<text x="${colX + 48}" y="${mid + 4}" font-size="12" font-weight="700" fill="${color}" text-anchor="end">${formatRatio(r)}</text>`,
      `<text x="${colX + 58}" y="${mid + 4}" font-size="12" fill="#4b5563">${escapeXml(m.goal === null ? '' : describeGoal(m.goal))}</text>`,
      `<text x="${WIDTH - PAD - 8}" y="${mid + 4}" font-size="13" font-weight="700" fill="${color}" text-anchor="end">${goalMark(met)}</text>`,
    );
    y += ROW_H;
  });

  const axisY = y + 4;
  const grid: string[] = [];
  if (ratioMetrics.length > 0) {
    grid.push(`<line x1="${plotX}" y1="${axisY}" x2="${plotX + plotW}" y2="${axisY}" stroke="#9ca3af"/>`);
    for (let i = 0; i * step <= max * (1 + 1e-9); i++) {
      const x = px(xAt(i * step));
      grid.push(
        `<line x1="${x}" y1="${top}" x2="${x}" y2="${axisY}" stroke="#d1d5db" stroke-width="0.75"/>`,
        `<line x1="${x}" y1="${axisY}" x2="${x}" y2="${axisY + 5}" stroke="#9ca3af"/>`,
        `<text x="${x}" y="${axisY + 18}" font-size="11" fill="#4b5563" text-anchor="middle">${Number((i * step).toPrecision(4))}×</text>`,
      );
    }
    const one = px(xAt(1));
    bars.push(
      `<line x1="${one}" y1="${top - 6}" x2="${one}" y2="${axisY}" stroke="${INK}" stroke-width="1" stroke-dasharray="3 2"/>`,
    );
    y = axisY + 30;
  }

  const abs = absoluteRows(absMetrics, y + 6);
  const height = abs.bottom + PAD;
  const meta = [results.gpu, `driver ${results.driver}`, `CUDA ${results.cuda}`, results.commit, results.date].join(
    ' · ',
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="${FONT}">`,
    `<rect x="0" y="0" width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="${PAD}" y="30" font-size="17" font-weight="600" fill="${INK}">tscuda ÷ native C, per metric (per-call metrics: ÷ koffi's floor)</text>`,
    `<text x="${PAD}" y="50" font-size="12" fill="#4b5563">${escapeXml(meta)}</text>`,
    ...legendParts(66),
    ...backgrounds,
    ...grid,
    ...parts,
    ...bars,
    ...abs.parts,
    '</svg>',
  ].join('\n');
}
