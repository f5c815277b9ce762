/** One problem with the configuration, named by its variable. */
export interface ConfigIssue {
  variable: string;
  message: string;
}
