/**
 * The outbound URL policy: which addresses are refused in which spellings, what the allow-list
 * permits, and the client's send-time checks against real local servers (a name resolving to
 * loopback, a redirect to loopback, DNS answers) with nothing sent to a refused address.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  describeOutboundFailure,
  OutboundAllowListError,
  OutboundBlockedError,
  OutboundClient,
  OutboundPolicy,
  parseOutboundAllowList,
  readTextLimited,
} from '../../src/lib/outbound/index.js';

const strict = new OutboundPolicy();

describe('outbound policy: addresses', () => {
  const refused = [
    '127.0.0.1', '127.1.2.3', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '100.64.0.1', '100.127.255.254',
    '169.254.169.254', '169.254.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '192.0.0.192', '168.63.129.16', '100.100.100.200',
    '::1', '::', 'fe80::1', 'fc00::1', 'fd00:ec2::254', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254',
    '64:ff9b::7f00:1', '2002:7f00:1::',
  ];
  for (const address of refused) {
    it(`refuses ${address}`, () => assert.ok(strict.addressRefusal(address), address));
  }
  for (const address of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
    it(`allows the public address ${address}`, () => assert.equal(strict.addressRefusal(address), undefined));
  }
  it('says which kind of address it refused', () => {
    assert.equal(strict.addressRefusal('127.0.0.1'), 'a loopback address');
    assert.equal(strict.addressRefusal('169.254.169.254'), 'a cloud metadata address');
    assert.equal(strict.addressRefusal('10.1.1.1'), 'a private network address');
    assert.equal(strict.addressRefusal('::ffff:127.0.0.1'), 'a loopback address');
  });
});

describe('outbound policy: URLs at write time', () => {
  const refusedUrls = [
    'http://127.0.0.1:9/x', 'http://2130706433/', 'http://0x7f.1/', 'http://127.1/', 'http://0177.0.0.1/', 'http://[::1]:8080/',
    'http://[::ffff:127.0.0.1]/', 'http://169.254.169.254/latest/meta-data/', 'https://10.0.0.5/hook', 'http://[fe80::1]/', 'http://0.0.0.0/',
  ];
  for (const url of refusedUrls) {
    it(`refuses ${url}`, () => assert.match(strict.urlRefusal(url) ?? '', /points at/));
  }
  it('refuses other schemes and credentials', () => {
    assert.match(strict.urlRefusal('ftp://example.com/x') ?? '', /http or https/);
    assert.match(strict.urlRefusal('file:///etc/passwd') ?? '', /http or https/);
    assert.match(strict.urlRefusal('https://user:pw@example.com/x') ?? '', /credentials/);
  });
  it('accepts names (checked when sent) and public literals; placeholders stand for a word', () => {
    assert.equal(strict.urlRefusal('https://crm.example.com/x?id={id}'), undefined);
    assert.equal(strict.urlRefusal('http://localhost:8080/'), undefined);
    assert.equal(strict.urlRefusal('http://{host}/x'), undefined);
    assert.equal(strict.urlRefusal('http://93.184.216.34/'), undefined);
  });
  it('permits what DIALER_OUTBOUND_ALLOW names: ranges, addresses, hosts and domains', () => {
    const policy = new OutboundPolicy(parseOutboundAllowList('127.0.0.0/8, 10.20.0.5, fd00::/8, receiver.internal, .corp.example'));
    assert.equal(policy.urlRefusal('http://127.0.0.1:9/'), undefined);
    assert.equal(policy.urlRefusal('http://[::ffff:127.0.0.1]/'), undefined);
    assert.equal(policy.urlRefusal('http://10.20.0.5/'), undefined);
    assert.ok(policy.urlRefusal('http://10.20.0.6/'));
    assert.equal(policy.addressRefusal('fd12::1'), undefined);
    assert.ok(policy.hostAllowed('receiver.internal'));
    assert.ok(policy.hostAllowed('a.b.corp.example'));
    assert.ok(!policy.hostAllowed('corp.example.evil.com'));
  });
  it('refuses a malformed allow-list entry', () => {
    assert.throws(() => parseOutboundAllowList('10.0.0.0/99'), OutboundAllowListError);
    assert.throws(() => parseOutboundAllowList('not a host!'), OutboundAllowListError);
  });
});

describe('outbound client: send time', () => {
  let local: http.Server;
  let other: http.Server;
  let localPort: number;
  let otherPort: number;
  const seen: string[] = [];

  before(async () => {
    local = http.createServer((req, res) => {
      seen.push(`local ${req.method} ${req.url}`);
      if (req.url === '/big') return void res.end('x'.repeat(100_000));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"secret":"internal"}');
    });
    await new Promise<void>((r) => local.listen(0, '127.0.0.1', r));
    localPort = (local.address() as AddressInfo).port;
    // The "allowed receiver": 127.0.0.2 is loopback too, but the tests allow that one address.
    other = http.createServer((req, res) => {
      seen.push(`other ${req.method} ${req.url}`);
      if (req.url === '/to-local') return void res.writeHead(302, { location: `http://127.0.0.1:${localPort}/secret` }).end();
      if (req.url === '/to-localhost') return void res.writeHead(307, { location: `http://localhost:${localPort}/secret` }).end();
      if (req.url === '/to-self') return void res.writeHead(303, { location: '/landed' }).end();
      res.writeHead(200).end('ok');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.2', r));
    otherPort = (other.address() as AddressInfo).port;
  });
  after(() => {
    for (const s of [local, other]) {
      s.closeAllConnections();
      s.close();
    }
  });
  beforeEach(() => {
    seen.length = 0;
  });

  it('blocks a literal refused address without a connection', async () => {
    const client = new OutboundClient();
    await assert.rejects(client.fetch(`http://127.0.0.1:${localPort}/secret`), OutboundBlockedError);
    await assert.rejects(client.fetch(`http://2130706433:${localPort}/secret`), OutboundBlockedError);
    assert.deepEqual(seen, []);
    await client.close();
  });

  it('blocks a name that resolves to loopback (localhost) at connect time', async () => {
    const client = new OutboundClient();
    const err = await client.fetch(`http://localhost:${localPort}/secret`).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof OutboundBlockedError, String(err));
    assert.equal(describeOutboundFailure(err), 'blocked: localhost resolves to a loopback address');
    assert.deepEqual(seen, []);
    await client.close();
  });

  it('checks every redirect: one from an allowed receiver to loopback is blocked, by literal or by name', async () => {
    const client = new OutboundClient(parseOutboundAllowList('127.0.0.2'));
    await assert.rejects(client.fetch(`http://127.0.0.2:${otherPort}/to-local`), OutboundBlockedError);
    await assert.rejects(client.fetch(`http://127.0.0.2:${otherPort}/to-localhost`, { method: 'POST', body: '{}' }), OutboundBlockedError);
    assert.deepEqual(seen, ['other GET /to-local', 'other POST /to-localhost']);
    const landed = await client.fetch(`http://127.0.0.2:${otherPort}/to-self`, { method: 'POST', body: '{}' });
    assert.equal(landed.status, 200);
    assert.deepEqual(seen.slice(2), ['other POST /to-self', 'other GET /landed']);
    const manual = await client.fetch(`http://127.0.0.2:${otherPort}/to-local`, { redirect: 'manual' });
    assert.equal(manual.status, 302);
    await client.close();
  });

  it('goes through when the operator allows the range (as the test suite does)', async () => {
    const client = new OutboundClient(parseOutboundAllowList('127.0.0.0/8'));
    const res = await client.fetch(`http://localhost:${localPort}/secret`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { secret: 'internal' });
    await client.close();
  });

  it('reads at most the bytes asked for', async () => {
    const client = new OutboundClient(parseOutboundAllowList('127.0.0.0/8'));
    const { text, truncated } = await readTextLimited(await client.fetch(`http://127.0.0.1:${localPort}/big`), 8192);
    assert.equal(text.length, 8192);
    assert.equal(truncated, true);
    await client.close();
  });

  it('describes failures without addresses or ports', async () => {
    const client = new OutboundClient(parseOutboundAllowList('127.0.0.0/8'));
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const err = await client.fetch(`http://127.0.0.1:${port}/`).catch((e: unknown) => e);
    assert.equal(describeOutboundFailure(err), 'request failed: the connection was refused');
    assert.doesNotMatch(describeOutboundFailure(err), new RegExp(String(port)));
    await client.close();
  });
});
