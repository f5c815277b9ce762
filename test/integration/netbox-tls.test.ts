import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createNetboxClient, NetboxError } from '../../src/netbox';
import { makeTempDir } from '../helpers/relay-harness';
import { createTestCertificates } from '../helpers/test-certificates';

/** NetBox's certificate is always verified: a private CA is trusted through NETBOX_CA_FILE, never by turning the check off. */
describe("NetBox's certificate", () => {
  let dir: string;
  let server: https.Server;
  let url: string;
  let caFile: string;

  beforeAll(async () => {
    dir = makeTempDir('netbox-tls-');
    const certs = createTestCertificates(dir);
    caFile = certs.caFile;
    server = https.createServer({ key: certs.key, cert: certs.cert }, (_req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.end('{"netbox-version": "4.6.8", "plugins": {"validity": "3.5.2"}}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const status = async (ca?: Buffer) => {
    const client = createNetboxClient({ url, token: 'nbt_abc.def', ca, timeoutMs: 5_000 });
    try {
      return await client.getJson('/api/status/', { deadline: Date.now() + 5_000 });
    } catch (error) {
      return error;
    } finally {
      client.close();
    }
  };

  it('signed by a private CA: trusted with NETBOX_CA_FILE', async () => {
    expect(await status(fs.readFileSync(caFile))).toMatchObject({ 'netbox-version': '4.6.8' });
  });

  it('signed by a private CA, without NETBOX_CA_FILE: refused, saying to set it', async () => {
    const error = await status();
    expect(error).toBeInstanceOf(NetboxError);
    expect((error as NetboxError).message).toContain("NetBox's TLS certificate is not trusted");
    expect((error as NetboxError).message).toContain('set NETBOX_CA_FILE');
  });
});
