/** How many of something are under way: the webhooks being received and answered, for the `compliance_relay_webhooks_in_flight` gauge. */
export type ActivityCounter = ReturnType<typeof createActivityCounter>;

export function createActivityCounter() {
  let active = 0;
  return {
    get active() {
      return active;
    },
    /** One more is under way; call the function returned once, when it ends (the webhook route: on the response's `close`). */
    begin(): () => void {
      active += 1;
      return () => {
        active -= 1;
      };
    },
  };
}
