/**
 * The chart's labels as strokes: digits, `%`, `#` and `.` drawn as short polylines on a 4 × 6 grid. A
 * chart's labels are a handful of numbers; loading a font for them would make resvg scan or parse font
 * files at each chart (30-60 ms for the system scan), where a path costs what a grid line costs.
 */

/** Each glyph: polylines of [x, y] on a 4 wide × 6 high grid, y down; and its advance in grid units. */
const GLYPHS: Record<string, { strokes: number[][][]; advance: number }> = {
  '0': {
    strokes: [
      [
        [1, 0],
        [3, 0],
        [4, 1],
        [4, 5],
        [3, 6],
        [1, 6],
        [0, 5],
        [0, 1],
        [1, 0],
      ],
    ],
    advance: 5.5,
  },
  '1': {
    strokes: [
      [
        [0.8, 1.2],
        [2.2, 0],
        [2.2, 6],
      ],
      [
        [0.8, 6],
        [3.6, 6],
      ],
    ],
    advance: 5.5,
  },
  '2': {
    strokes: [
      [
        [0, 1],
        [1, 0],
        [3, 0],
        [4, 1],
        [4, 2.2],
        [0, 6],
        [4, 6],
      ],
    ],
    advance: 5.5,
  },
  '3': {
    strokes: [
      [
        [0, 0],
        [4, 0],
        [1.8, 2.5],
        [3, 2.5],
        [4, 3.5],
        [4, 5],
        [3, 6],
        [1, 6],
        [0, 5],
      ],
    ],
    advance: 5.5,
  },
  '4': {
    strokes: [
      [
        [3, 6],
        [3, 0],
        [0, 4.2],
        [4, 4.2],
      ],
    ],
    advance: 5.5,
  },
  '5': {
    strokes: [
      [
        [4, 0],
        [0.3, 0],
        [0, 2.7],
        [3, 2.5],
        [4, 3.5],
        [4, 5],
        [3, 6],
        [0, 6],
      ],
    ],
    advance: 5.5,
  },
  '6': {
    strokes: [
      [
        [3.5, 0],
        [1.5, 0],
        [0, 1.5],
        [0, 5],
        [1, 6],
        [3, 6],
        [4, 5],
        [4, 3.5],
        [3, 2.6],
        [0, 2.6],
      ],
    ],
    advance: 5.5,
  },
  '7': {
    strokes: [
      [
        [0, 0],
        [4, 0],
        [1.4, 6],
      ],
    ],
    advance: 5.5,
  },
  '8': {
    strokes: [
      [
        [1, 0],
        [3, 0],
        [4, 1],
        [4, 2],
        [3, 2.9],
        [1, 2.9],
        [0, 4],
        [0, 5],
        [1, 6],
        [3, 6],
        [4, 5],
        [4, 4],
        [3, 2.9],
        [1, 2.9],
        [0, 2],
        [0, 1],
        [1, 0],
      ],
    ],
    advance: 5.5,
  },
  '9': {
    strokes: [
      [
        [4, 3.4],
        [1, 3.4],
        [0, 2.5],
        [0, 1],
        [1, 0],
        [3, 0],
        [4, 1],
        [4, 4.5],
        [2.5, 6],
        [0.5, 6],
      ],
    ],
    advance: 5.5,
  },
  '%': {
    strokes: [
      [
        [0, 6],
        [4, 0],
      ],
      [
        [0, 0],
        [1.3, 0],
        [1.3, 1.3],
        [0, 1.3],
        [0, 0],
      ],
      [
        [2.7, 4.7],
        [4, 4.7],
        [4, 6],
        [2.7, 6],
        [2.7, 4.7],
      ],
    ],
    advance: 5.5,
  },
  '#': {
    strokes: [
      [
        [1.4, 0.3],
        [1, 5.7],
      ],
      [
        [3.2, 0.3],
        [2.8, 5.7],
      ],
      [
        [0, 2],
        [4.2, 2],
      ],
      [
        [0, 4],
        [4, 4],
      ],
    ],
    advance: 5.8,
  },
  '.': {
    strokes: [
      [
        [0.6, 5.7],
        [0.6, 6],
      ],
    ],
    advance: 2.2,
  },
};

/** Glyph height in grid units: `size` pixels tall means size / 6 pixels per unit. */
const GRID_HEIGHT = 6;

/** How wide `text` is at `size` pixels tall (characters without a glyph take a digit's room, undrawn). */
export function measureStrokeText(text: string, size: number): number {
  const unit = size / GRID_HEIGHT;
  const advance = [...text].reduce((sum, ch) => sum + (GLYPHS[ch]?.advance ?? 5.5), 0);
  return Math.max(0, advance - 1.5) * unit;
}

/** `text` as one SVG path, its top-left at (x, y), `size` pixels tall, stroked in `colour`. */
export function drawStrokeText(text: string, x: number, y: number, size: number, colour: string): string {
  const unit = size / GRID_HEIGHT;
  let cursor = x;
  const parts: string[] = [];
  for (const ch of text) {
    const glyph = GLYPHS[ch];
    if (glyph) {
      for (const stroke of glyph.strokes) {
        parts.push(stroke.map(([gx, gy], i) => `${i === 0 ? 'M' : 'L'}${fixed(cursor + gx * unit)} ${fixed(y + gy * unit)}`).join(''));
      }
    }
    cursor += (glyph?.advance ?? 5.5) * unit;
  }
  const width = Math.max(1, size / 8.5);
  return `<path d="${parts.join('')}" fill="none" stroke="${colour}" stroke-width="${fixed(width)}" stroke-linecap="square" shape-rendering="crispEdges"/>`;
}

function fixed(v: number): string {
  return String(Math.round(v * 100) / 100);
}
