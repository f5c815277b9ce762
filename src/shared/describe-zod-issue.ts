import type { z } from 'zod';

/** zod's own sentences start like this; a schema's own message (`'must be a path starting with /'`) does not. */
const ZOD_DEFAULT_MESSAGE = /^(Invalid|Too (big|small)|Unrecognized|Expected)/;

const TYPE_WORDS: Record<string, string> = {
  number: 'a number',
  int: 'a whole number',
  string: 'text',
  array: 'a list',
  object: 'a mapping (key: value)',
  boolean: 'true or false',
};

/** An issue in the words of who wrote the value ("must be a whole number"); a schema's own message is kept. */
export function describeZodIssue(issue: z.core.$ZodIssue | { code?: undefined; message: string }): string {
  if (!ZOD_DEFAULT_MESSAGE.test(issue.message)) return issue.message;
  switch (issue.code) {
    case 'invalid_type':
      if (/received undefined|nonoptional/.test(issue.message)) return 'is required';
      return `must be ${TYPE_WORDS[issue.expected] ?? issue.expected}`;
    case 'too_big':
    case 'too_small': {
      const big = issue.code === 'too_big';
      const limit = String(big ? issue.maximum : issue.minimum);
      const relation = issue.inclusive === false ? (big ? 'below' : 'above') : big ? 'at most' : 'at least';
      if (issue.origin === 'string') return `must be ${relation} ${limit} characters long`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must have ${relation} ${limit} entr${limit === '1' ? 'y' : 'ies'}`;
      return `must be ${relation} ${limit}`;
    }
    case 'invalid_value':
      // zod's stringbool says so in a field its type leaves out.
      if ((issue as { expected?: string }).expected === 'stringbool') {
        const others = issue.values.filter((v) => v !== 'true' && v !== 'false');
        return `must be true or false${others.length > 0 ? ` (or ${others.join(', ')})` : ''}`;
      }
      return `must be one of ${issue.values.map(String).join(', ')}`;
    case 'invalid_format':
      if (issue.format === 'email') return 'must be an e-mail address (name@example.com)';
      if (issue.format === 'url') return 'must be a URL (https://host/path)';
      if (issue.format === 'regex' && issue.pattern) return `must match ${issue.pattern}`;
      return `must be a valid ${issue.format}`;
    case 'unrecognized_keys':
      return `unknown key${issue.keys.length === 1 ? '' : 's'} ${issue.keys.join(', ')} (check the spelling)`;
    case 'invalid_union':
      return 'has a value of none of the allowed forms';
    default:
      return issue.message;
  }
}
