import { describeMailError } from '../../src/notify';

// The words for real errors are asserted against real peers in test/integration/errors-say-what-to-do.test.ts;
// this checks only what is decided from the code: the server's own answers are never reworded.
describe('describeMailError', () => {
  it("leaves the server's answer to a message alone, even when its words look like a connection failure", () => {
    expect(describeMailError({ code: 'SMTP_4XX', message: '451 4.4.2 Timeout waiting for data from client' })).toBeUndefined();
    expect(describeMailError({ code: 'SMTP_5XX', message: '554 5.7.1 client certificate required' })).toBeUndefined();
    expect(describeMailError({ code: 'TEMPLATE', message: 'connect ECONNREFUSED in a template' })).toBeUndefined();
  });

  it('describes a stored connection failure from its code and message', () => {
    expect(describeMailError({ code: 'ESOCKET', message: 'connect ECONNREFUSED 10.0.0.5:587' })).toBe(
      'Nothing accepts connections at 10.0.0.5:587 (connection refused). Check the host and port in SMTP_URL (587 STARTTLS, 465 smtps://, 25) and that the mail server runs.',
    );
  });
});
