import { loadConfig } from '../../src/config';
import { describeBoot } from '../../src/cli/serve';

const noFiles = () => {
  throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
};

test('the start line names what mails go through: Microsoft Graph, SMTP, or .eml files', () => {
  const base = { MAIL_TO: 'netops@contoso.example', MAIL_FROM: 'relay@contoso.example', DATA_DIR: '/srv/relay' };
  const graph = loadConfig(
    {
      ...base,
      MAIL_TRANSPORT: 'graph',
      OAUTH2_TENANT_ID: 'contoso.onmicrosoft.com',
      OAUTH2_CLIENT_ID: 'app',
      OAUTH2_CLIENT_SECRET: 'app-secret',
    },
    { readFile: noFiles, cwd: '/srv' },
  );
  expect(describeBoot(graph)).toContain('mail via Microsoft Graph as relay@contoso.example,');
  expect(describeBoot(graph)).not.toContain('.eml');
  const smtp = loadConfig({ ...base, SMTP_URL: 'smtp://mail.contoso.example:587' }, { readFile: noFiles, cwd: '/srv' });
  expect(describeBoot(smtp)).toContain('mail via SMTP mail.contoso.example:587,');
  const files = loadConfig(base, { readFile: noFiles, cwd: '/srv' });
  expect(describeBoot(files)).toMatch(/mail via \.eml files in \/srv\/relay/);
});
