/** How many of something are under way: the webhooks being received and answered, for the `compliance_relay_webhooks_in_flight` gauge. */
export type ActivityCounter = ReturnType<typeof createActivityCounter>;

export function createActivityCounter() {
  let active = 0;
  return {
    get active() {
      return active;
    },
    /** One more is under way; call the function returned when it ends (once; later calls do nothing). */
    begin(): () => void {
      active += 1;
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        active -= 1;
      };
    },
  };
}
