/** CSV input of `tscuda stft`: one column of numbers, with or without a header row. */
import { checkFs, SignalInputError, type ReadSignalOptions, type SignalInput } from './signal-format.js';

function splitRow(line: string, delimiter: string): string[] {
  return line.split(delimiter).map((c) =>
    c
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .trim(),
  );
}

function detectDelimiter(line: string): string {
  for (const d of [',', ';', '\t']) if (line.includes(d)) return d;
  return /\s/.test(line.trim()) ? ' ' : ',';
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function isNumber(cell: string): boolean {
  return NUMBER.test(cell);
}

/**
 * Parses CSV text: an optional header row, then one number per row in the chosen column
 * (comma, semicolon, tab or whitespace separated; '#' lines and blank lines skipped). The
 * column is `options.column` (index or header name), else the first column whose first data
 * cell is a number. A non-numeric cell is an error naming its line.
 */
export function parseCsv(text: string, options: ReadSignalOptions = {}, name = 'input'): SignalInput {
  checkFs(options.fs, name);
  const lines = text.split(/\r?\n/);
  const rows: { line: number; text: string }[] = [];
  lines.forEach((l, i) => {
    const t = l.trim();
    if (t !== '' && !t.startsWith('#')) rows.push({ line: i + 1, text: t });
  });
  if (rows.length === 0) throw new SignalInputError(`${name}: no data rows`);
  const delimiter = detectDelimiter(rows[0]!.text);
  const split = (s: string): string[] => (delimiter === ' ' ? s.split(/\s+/) : splitRow(s, delimiter));
  const first = split(rows[0]!.text);
  const hasHeader = !first.some(isNumber);
  const header = hasHeader ? first : undefined;
  const data = hasHeader ? rows.slice(1) : rows;
  if (data.length === 0) throw new SignalInputError(`${name}: a header row but no data rows`);

  let column: number;
  if (typeof options.column === 'string') {
    if (!header)
      throw new SignalInputError(
        `${name}: column "${options.column}" asked for by name, but the file has no header row`,
      );
    column = header.indexOf(options.column);
    if (column < 0)
      throw new SignalInputError(
        `${name}: no column named "${options.column}"; the columns are ${header.map((h) => `"${h}"`).join(', ')}`,
      );
  } else if (typeof options.column === 'number') {
    column = options.column;
    const width = split(data[0]!.text).length;
    if (!Number.isInteger(column) || column < 0 || column >= width)
      throw new SignalInputError(
        `${name}: column ${options.column} does not exist; line ${data[0]!.line} has columns 0..${width - 1}`,
      );
  } else {
    column = split(data[0]!.text).findIndex(isNumber);
    if (column < 0) throw new SignalInputError(`${name}: line ${data[0]!.line} has no numeric column`);
  }

  const samples = new Float64Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const { line, text: rowText } = data[i]!;
    const cell = split(rowText)[column];
    if (cell === undefined || cell === '')
      throw new SignalInputError(`${name}: line ${line} has no value in column ${column}`);
    if (!isNumber(cell))
      throw new SignalInputError(`${name}: line ${line}, column ${column}: "${cell}" is not a number`);
    samples[i] = Number(cell);
    // 1e999 is spelt like a number but is Infinity: refused as the raw formats refuse non-finite samples.
    if (!Number.isFinite(samples[i]))
      throw new SignalInputError(
        `${name}: line ${line}, column ${column}: "${cell}" is not finite; samples must be finite`,
      );
  }
  const label = header ? `column "${header[column]}"` : `column ${column}`;
  return {
    samples,
    length: samples.length,
    fs: options.fs ?? 1,
    format: 'csv',
    channels: 1,
    channelNote: label,
    fsSource: options.fs === undefined ? 'default' : 'option',
  };
}
