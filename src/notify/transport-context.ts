import type { ConfigIssue } from '../shared';

/** What a transport's `configure` may use besides the parsed environment, and where it reports problems. */
export interface TransportContext {
  issues: ConfigIssue[];
  /** Variables whose value the schema refused: rules comparing with them are not checked. */
  broken: ReadonlySet<string>;
  /** Reads a file the settings name (a CA, a key), at boot. */
  readFile: (file: string) => string;
  /** The environment as given: a retired variable a transport still honours for a release is read from here. */
  rawEnv: Readonly<Record<string, string>>;
  /** DATA_DIR/mail, where `.eml` files go. */
  outboxDir: string;
  /** Real mail needs recipients: reports MAIL_TO when neither it nor ROUTES_FILE is given (`when`: what sends real mail). */
  requireRecipients(when: string): void;
}
