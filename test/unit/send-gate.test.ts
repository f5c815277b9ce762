import { createSendGate } from '../../src/delivery/send-gate';

/** Resolves after pending promise callbacks have run. */
const settle = () => new Promise((r) => setImmediate(r));

describe('send gate: deliveries prepared ahead send in queue order, no more than the pool at once', () => {
  it('with one permit, sends strictly in ticket order even when a younger delivery is ready first', async () => {
    const gate = createSendGate(1);
    const [a, b, c] = [gate.ticket(), gate.ticket(), gate.ticket()];
    const order: string[] = [];
    void c.acquire().then(() => order.push('c'));
    void b.acquire().then(() => order.push('b'));
    await settle();
    // a is still composing: b and c wait for it.
    expect(order).toEqual([]);
    await a.acquire();
    order.push('a');
    a.release();
    await settle();
    expect(order).toEqual(['a', 'b']);
    b.release();
    await settle();
    expect(order).toEqual(['a', 'b', 'c']);
    c.release();
    expect(gate.waiting).toBe(0);
  });

  it('with n permits, never more than n hold one, and any of the n oldest waiting may go first', async () => {
    const gate = createSendGate(2);
    const tickets = Array.from({ length: 5 }, () => gate.ticket());
    let holding = 0;
    let most = 0;
    const got: number[] = [];
    tickets.forEach(
      (t, i) =>
        void t.acquire().then(() => {
          holding += 1;
          most = Math.max(most, holding);
          got.push(i);
        }),
    );
    await settle();
    expect(got.sort()).toEqual([0, 1]);
    holding -= 1;
    tickets[1].release();
    await settle();
    expect(got).toContain(2);
    for (const i of [0, 2, 3, 4]) {
      holding -= 1;
      tickets[i].release();
      await settle();
    }
    expect(got.sort()).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
  });

  it('a cancelled ticket (nothing to send, or failed before sending) does not hold the queue', async () => {
    const gate = createSendGate(1);
    const [a, b] = [gate.ticket(), gate.ticket()];
    let bSends = false;
    void b.acquire().then(() => (bSends = true));
    await settle();
    expect(bSends).toBe(false);
    a.cancel();
    a.cancel();
    await settle();
    expect(bSends).toBe(true);
    b.release();
    b.release();
    // A released permit is given back once only: the next two tickets cannot both hold it.
    const [c, d] = [gate.ticket(), gate.ticket()];
    let both = 0;
    void c.acquire().then(() => (both += 1));
    void d.acquire().then(() => (both += 1));
    await settle();
    expect(both).toBe(1);
  });
});
