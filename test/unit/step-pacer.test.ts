import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createStepPacer } from '../../src/delivery/step-pacer';

/** Holds the event loop for `ms`, as a compose or a MIME build does. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // a synchronous step
  }
}

describe('step pacer: the worker gives the event loop back between its heavy steps', () => {
  it('answers a request that arrives while twenty steps are due before the last of them runs', async () => {
    // Twenty deliveries resumed by one group commit: without the pacer their steps run back to back
    // in one microtask checkpoint, and the request waits for all of them.
    const server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const pacer = createStepPacer();
      const order: string[] = [];
      const answered = new Promise<void>((resolve) => {
        http.get(`http://127.0.0.1:${port}/`, (res) => {
          res.resume();
          res.on('end', () => {
            order.push('answer');
            resolve();
          });
        });
      });
      const steps = Array.from({ length: 20 }, (_, i) =>
        pacer.turn().then(() => {
          busy(5);
          order.push(`step ${i}`);
        }),
      );
      await Promise.all([answered, ...steps]);
      expect(order.filter((o) => o.startsWith('step'))).toEqual(Array.from({ length: 20 }, (_, i) => `step ${i}`));
      expect(order.indexOf('answer')).toBeLessThan(order.indexOf('step 19'));
      expect(order.indexOf('answer')).toBeGreaterThan(-1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  describe('with fake timers', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('spaces the steps by the gap while webhooks wait, and lets them go at once when none does', async () => {
      let acks = true;
      const pacer = createStepPacer({ acksWaiting: () => acks, gapMs: 10 });
      const granted: number[] = [];
      for (let i = 0; i < 3; i++) void pacer.turn().then(() => granted.push(i));
      await jest.advanceTimersByTimeAsync(9);
      expect(granted).toEqual([]);
      expect(pacer.waiting).toBe(3);
      await jest.advanceTimersByTimeAsync(1);
      expect(granted).toEqual([0]);
      await jest.advanceTimersByTimeAsync(10);
      expect(granted).toEqual([0, 1]);
      // The webhooks are answered: the next step's grant is already timed, the one after goes at the next turn.
      acks = false;
      await jest.advanceTimersByTimeAsync(10);
      expect(granted).toEqual([0, 1, 2]);
      void pacer.turn().then(() => granted.push(3));
      await jest.advanceTimersByTimeAsync(0);
      expect(granted).toEqual([0, 1, 2, 3]);
      expect(pacer.waiting).toBe(0);
    });
  });
});
