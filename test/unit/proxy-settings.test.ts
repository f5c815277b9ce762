import { loadConfig } from '../../src/config';
import type { ConfigIssue } from '../../src/shared';
import { chooseProxy, describeProxySettings, readProxySettings } from '../../src/shared';

/** NO_PROXY and the *_PROXY variables as curl reads them (curl(1), ENVIRONMENT). */
describe('the proxy a URL goes through', () => {
  const proxy = { httpProxy: 'http://web-proxy:3128', httpsProxy: 'http://tls-proxy:3128' };

  it('https URLs take HTTPS_PROXY, http URLs HTTP_PROXY, each only its own', () => {
    expect(chooseProxy('https://netbox.example.com/api/', proxy)).toBe('http://tls-proxy:3128/');
    expect(chooseProxy('http://netbox.example.com/api/', proxy)).toBe('http://web-proxy:3128/');
    expect(chooseProxy('https://netbox.example.com/', { httpProxy: 'http://web-proxy:3128' })).toBeUndefined();
  });

  it('a proxy without a scheme is an http:// proxy', () => {
    expect(chooseProxy('https://login.microsoftonline.com/', { httpsProxy: 'proxy.corp:8080' })).toBe('http://proxy.corp:8080/');
  });

  it.each([
    ['a host matches itself', 'netbox.example.com', 'https://netbox.example.com/', true],
    ['a domain matches the names under it', 'example.com', 'https://netbox.example.com/', true],
    ['a leading dot too, and the domain itself', '.example.com', 'https://example.com/', true],
    ['*. as a leading dot', '*.example.com', 'https://netbox.example.com/', true],
    ['a name only ends with the same letters', 'example.com', 'https://notexample.com/', false],
    ['a port limits the entry to it', 'netbox.example.com:8443', 'https://netbox.example.com:8443/', true],
    ['the default port counts as given', 'netbox.example.com:443', 'https://netbox.example.com/', true],
    ['another port does not match', 'netbox.example.com:8443', 'https://netbox.example.com/', false],
    ['* alone matches every host', '*', 'https://graph.microsoft.com/', true],
    ['entries are separated by commas and spaces, any case', 'localhost, Example.COM  intra', 'https://NetBox.example.com/', true],
    ['an address matches itself only', '0.0.1', 'http://10.0.0.1/', false],
    ['an address', '10.0.0.1', 'http://10.0.0.1:8000/', true],
    ['an IPv6 address, bracketed with a port', '[::1]:8000', 'http://[::1]:8000/', true],
    ['an IPv6 address', '::1', 'http://[::1]:8000/', true],
  ])('NO_PROXY: %s (%s, %s)', (_what, noProxy, url, direct) => {
    expect(chooseProxy(url, { ...proxy, noProxy })).toBe(
      direct ? undefined : url.startsWith('https') ? proxy.httpsProxy + '/' : proxy.httpProxy + '/',
    );
  });

  it('reads the lower-case form first, takes empty as unset, and names a variable that is not a proxy URL', () => {
    const issues: ConfigIssue[] = [];
    const settings = readProxySettings(
      { https_proxy: 'http://lower:3128', HTTPS_PROXY: 'http://upper:3128', http_proxy: '', HTTP_PROXY: 'ftp://proxy', NO_PROXY: '.corp' },
      issues,
    );
    expect(settings).toEqual({ httpsProxy: 'http://lower:3128', noProxy: '.corp' });
    expect(issues).toEqual([{ variable: 'HTTP_PROXY', message: 'is not a proxy URL (example: http://proxy.example.com:3128)' }]);
  });

  it('describes the proxies without their credentials', () => {
    const line = describeProxySettings({ httpsProxy: 'http://relay:s3cret@proxy.corp:3128', noProxy: '.corp' });
    expect(line).toBe(
      'https requests go through http://proxy.corp:3128 (with credentials, not shown), http requests directly; never for NO_PROXY: .corp',
    );
  });

  it("keeps a proxy's password among the secrets the logger masks", () => {
    const config = loadConfig({ HTTPS_PROXY: 'http://relay:pr0xy-s3cret@proxy.corp:3128' }, { readFile: () => '' });
    expect(config.proxy).toEqual({ httpsProxy: 'http://relay:pr0xy-s3cret@proxy.corp:3128' });
    expect(config.secretValues).toContain('pr0xy-s3cret');
  });
});
