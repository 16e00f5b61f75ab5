/**
 * kamailio (Debian's package) as a carrier's SIP proxy in front of a callee: it challenges each
 * INVITE with 407 and digest authentication for one user and password (no database: the password
 * is in its config), answers wrong credentials 403, and relays an authenticated INVITE to the
 * callee, statefully. Requests inside a call are relayed by their Request-URI.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freeUdpPort } from './baresip.js';

export const KAMAILIO = process.env.KAMAILIO_PATH ?? '/usr/sbin/kamailio';

export interface Kamailio {
  /** host:port of its SIP socket. */
  address: string;
  output(): string;
  close(): Promise<void>;
}

export async function startKamailio(options: { realm: string; username: string; password: string; next: string }): Promise<Kamailio> {
  const dir = await mkdtemp(path.join(tmpdir(), 'dialer-kamailio-'));
  const port = await freeUdpPort();
  const config = `#!KAMAILIO
debug=1
log_stderror=yes
fork=yes
children=1
auto_aliases=no
listen=udp:127.0.0.1:${port}
loadmodule "tm.so"
loadmodule "sl.so"
loadmodule "pv.so"
loadmodule "auth.so"
loadmodule "maxfwd.so"
loadmodule "siputils.so"
loadmodule "textops.so"
request_route {
  if (!mf_process_maxfwd_header("10")) { sl_send_reply("483", "Too Many Hops"); exit; }
  if (is_method("ACK")) { if (t_check_trans()) t_relay(); else if (has_totag()) t_relay(); exit; }
  if (is_method("CANCEL")) { if (t_check_trans()) t_relay(); exit; }
  if (has_totag()) { t_relay(); exit; }
  if (is_method("OPTIONS")) { sl_send_reply("200", "OK"); exit; }
  if (!is_method("INVITE")) { sl_send_reply("405", "Method Not Allowed"); exit; }
  if (!pv_proxy_authenticate("${options.realm}", "${options.password}", "0") || $au != "${options.username}") {
    if (is_present_hf("Proxy-Authorization")) { sl_send_reply("403", "Forbidden"); exit; }
    proxy_challenge("${options.realm}", "0");
    exit;
  }
  consume_credentials();
  $du = "sip:${options.next}";
  t_relay();
}
`;
  await writeFile(path.join(dir, 'kamailio.cfg'), config);
  let output = '';
  const child: ChildProcess = spawn(KAMAILIO, ['-f', path.join(dir, 'kamailio.cfg'), '-E', '-DD', '-Y', dir, '-P', path.join(dir, 'kamailio.pid')], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kamailio: Kamailio = {
    address: `127.0.0.1:${port}`,
    output: () => output,
    async close() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  // Ready when it answers an OPTIONS.
  const probe = createSocket('udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + 15_000;
      let answered = false;
      probe.on('message', () => {
        answered = true;
        resolve();
      });
      const ask = () => {
        if (answered) return;
        if (child.exitCode !== null) return reject(new Error(`kamailio exited (${child.exitCode}):\n${output}`));
        if (Date.now() > deadline) return reject(new Error(`kamailio did not answer on ${port} within 15 s:\n${output}`));
        const options = [`OPTIONS sip:127.0.0.1:${port} SIP/2.0`, `Via: SIP/2.0/UDP 127.0.0.1:${probe.address().port};branch=z9hG4bKprobe${Date.now()}`, 'Max-Forwards: 70', `From: <sip:probe@127.0.0.1>;tag=p`, `To: <sip:127.0.0.1:${port}>`, `Call-ID: probe-${Date.now()}`, 'CSeq: 1 OPTIONS', 'Content-Length: 0', '', ''].join('\r\n');
        probe.send(options, port, '127.0.0.1');
        setTimeout(ask, 100).unref();
      };
      probe.bind(0, '127.0.0.1', ask);
    });
  } catch (err) {
    await kamailio.close();
    throw err;
  } finally {
    probe.close();
  }
  return kamailio;
}
