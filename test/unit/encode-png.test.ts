import { Resvg } from '@resvg/resvg-js';
import { PNG } from 'pngjs';
import { deflateRgba, toScanlines, wrapPng } from '../../src/mail/encode-png';
import { buildTrendChart, buildTrendChartSvg, type TrendChartPoint } from '../../src/mail';

const point = (reportId: number, ratios: TrendChartPoint['ratios']): TrendChartPoint => ({ reportId, at: '2026-03-01T06:00:00Z', ratios });

describe('the chart PNG written from resvg pixels', () => {
  it('decodes (pngjs, its CRCs checked) to exactly the pixels resvg drew, the same as resvg’s own PNG', () => {
    const series = {
      points: [
        point(1, { overall: 0.2, HIGH: 1, LOW: 0.4 }),
        point(2, { overall: 0.6, HIGH: null }),
        point(3, { overall: 0.9, HIGH: 0.5 }),
      ],
      currentIndex: 2,
    };
    const { svg } = buildTrendChartSvg(series);
    const image = new Resvg(svg, { fitTo: { mode: 'zoom', value: 2 }, font: { loadSystemFonts: false } }).render();
    const ours = PNG.sync.read(wrapPng(image.width, image.height, deflateRgba(image.pixels, image.width, image.height)), {
      checkCRC: true,
    });
    const resvgs = PNG.sync.read(image.asPng());
    expect([ours.width, ours.height]).toEqual([image.width, image.height]);
    expect(ours.data.equals(resvgs.data)).toBe(true);
    // Transparent corners outside the plate's rounded edge stay transparent (straight alpha, not flattened).
    expect(ours.data[3]).toBe(0);
    // And the chart a mail carries is that PNG.
    expect(PNG.sync.read(buildTrendChart(series).png).data.equals(resvgs.data)).toBe(true);
  });

  it('keeps each pixel in its place, a filter byte before every row, and demultiplies the translucent ones as resvg does', () => {
    // Premultiplied, as resvg hands them over: opaque, clear, and two of the plate's corner pixels.
    const premultiplied = Uint8Array.from(
      [
        [200, 10, 30, 255],
        [0, 0, 0, 0],
        [14, 14, 14, 16],
        [78, 80, 82, 95],
        [1, 2, 3, 255],
        [143, 146, 150, 175],
      ].flat(),
    );
    // What resvg's own PNG holds for those two corner pixels (read from its asPng()).
    const straight = [200, 10, 30, 255, 0, 0, 0, 0, 223, 223, 223, 16, 209, 215, 220, 95, 1, 2, 3, 255, 208, 213, 219, 175];
    const png = PNG.sync.read(wrapPng(3, 2, deflateRgba(premultiplied, 3, 2)), { checkCRC: true });
    expect([...png.data]).toEqual(straight);
    expect([...toScanlines(premultiplied, 3, 2)]).toEqual([0, ...straight.slice(0, 12), 0, ...straight.slice(12)]);
  });

  it('refuses pixels that do not fill the size it is given', () => {
    expect(() => deflateRgba(new Uint8Array(10), 3, 2)).toThrow('10 bytes are not 3×2 RGBA pixels');
  });
});
