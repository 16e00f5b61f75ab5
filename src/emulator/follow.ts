/**
 * Following Dialer's instructions: TwiML and Plivo XML verb by verb, and the emulated Exotel flow
 * (Voicebot applet, Connect applet, Hangup).
 */
import type { Call } from './call.js';
import { dialEnded, dialStarted } from './callbacks.js';
import { sleep, twilioId, uuid, type XmlNode } from './util.js';

/** How long the callee talks to the human of a transfer before both hang up. */
const TRANSFER_TALK_MS = 1000;

/** One top-level field of a JSON body, or undefined. */
function jsonField(body: string, key: string): unknown {
  try {
    const parsed: unknown = JSON.parse(body);
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>)[key] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The emulated Exotel flow: Voicebot applet (Dialer's answer URL must give {"url":"wss://…"}), then,
 * when Dialer closed the stream or gave no URL, the Connect applet (dynamic URL answer?transfer=1:
 * the numbers to dial), then the Hangup applet.
 */
export async function followExotel(call: Call, body: string, gen: number): Promise<void> {
  const url = jsonField(body, 'url');
  if (typeof url === 'string' && /^wss?:\/\//.test(url)) {
    const params = Object.fromEntries(new URL(url).searchParams);
    await call.stream(url, params, undefined, gen);
  } else call.log('the Voicebot applet got no {"url":"wss://…"}; the flow moves on to the Connect applet');
  if (call.over || gen !== call.generation) return;
  const connectUrl = new URL(call.setup.answerUrl);
  connectUrl.searchParams.set('transfer', '1');
  const res = await call.send({ url: connectUrl.toString(), method: 'GET', params: call.answerParams() });
  if (call.over || gen !== call.generation) return;
  if (res.status >= 200 && res.status < 300) {
    call.rec.markup.push(res.body);
    const numbers = (jsonField(res.body, 'destination') as { numbers?: unknown } | undefined)?.numbers;
    const playback = jsonField(res.body, 'start_call_playback') as { value?: unknown } | undefined;
    if (Array.isArray(numbers) && typeof numbers[0] === 'string') {
      if (typeof playback?.value === 'string') call.rec.said.push(playback.value);
      call.rec.redirectedTo = numbers[0];
      call.ctx.notify();
      const started = Date.now();
      await sleep(TRANSFER_TALK_MS);
      call.transferSeconds = Math.round((Date.now() - started) / 1000);
    } else call.log('the Connect applet got no number to dial; the flow reaches its Hangup applet');
  } else call.log(`the Connect applet's URL answered HTTP ${res.status}; the flow reaches its Hangup applet`);
  if (!call.over && gen === call.generation) await call.finish('completed', 'dialer');
}

export async function followXml(call: Call, doc: XmlNode, gen: number): Promise<void> {
  const live = () => !call.over && gen === call.generation;
  let detached: Promise<void> | undefined;
  for (const verb of doc.children) {
    if (!live()) return;
    const a = verb.attrs;
    switch (verb.name) {
      case 'Say':
      case 'Speak':
        call.rec.said.push(verb.text);
        call.ctx.notify();
        await sleep(Math.min(4000, 50 * verb.text.length) * Math.max(1, Number(a.loop ?? 1) || 1));
        break;
      case 'Play':
      case 'DTMF': {
        // Twilio <Play digits="1w2"/>, Plivo <DTMF>1w2</DTMF>: keys played to the callee.
        const digits = verb.name === 'Play' ? a.digits : verb.text;
        if (!digits) {
          call.log(`<${verb.name}> without digits: audio files are not emulated, skipped`);
          break;
        }
        call.callee.keys(digits, 'markup');
        await sleep([...digits].reduce((ms, d) => ms + (d === 'w' ? 500 : 200), 0));
        break;
      }
      case 'Pause':
      case 'Wait':
        await sleep(1000 * (Number(a.length ?? 1) || 1));
        break;
      case 'Connect': {
        const s = verb.children.find((c) => c.name === 'Stream');
        if (!s?.attrs.url) {
          call.log('<Connect> without <Stream url>: skipped');
          break;
        }
        const params = Object.fromEntries(s.children.filter((c) => c.name === 'Parameter').map((c) => [c.attrs.name ?? '', c.attrs.value ?? '']));
        await call.stream(s.attrs.url, params, undefined, gen);
        if (live() && a.action) {
          const res = await call.send({ url: a.action, method: a.method === 'GET' ? 'GET' : 'POST', params: call.answerParams(), ...call.signing() });
          return call.followResponse(res, gen);
        }
        break;
      }
      case 'Stream': {
        const extra = Object.fromEntries((a.extraHeaders ?? '').split(',').filter(Boolean).map((kv) => kv.split('=') as [string, string]));
        const cb = a.statusCallbackUrl ? { url: a.statusCallbackUrl, method: a.statusCallbackMethod === 'GET' ? ('GET' as const) : ('POST' as const) } : undefined;
        const run = call.stream(verb.text, extra, a.contentType, gen, cb);
        // Without keepCallAlive Plivo goes on with the next element at once.
        if (a.keepCallAlive === 'true') await run;
        else detached = run;
        break;
      }
      case 'Dial': {
        const replaced = await dial(call, verb, gen);
        if (replaced) return;
        break;
      }
      case 'Hangup':
        return call.finish('completed', 'dialer');
      case 'Reject':
        return call.finish('busy', 'dialer');
      case 'Redirect': {
        const res = await call.send({ url: verb.text, method: a.method === 'GET' ? 'GET' : 'POST', params: call.answerParams(), ...call.signing() });
        return call.followResponse(res, gen);
      }
      default:
        call.log(`<${verb.name}> is not emulated: skipped`);
    }
  }
  if (detached) call.log('the XML ended while a <Stream> without keepCallAlive="true" runs: Plivo hangs up');
  if (live()) await call.finish('completed', 'dialer');
}

/** <Dial>: the callee is put through to a human; true when the Dial action's answer replaced the instructions. */
async function dial(call: Call, verb: XmlNode, gen: number): Promise<boolean> {
  const numberNode = verb.children.find((c) => ['Number', 'Sip', 'Client', 'User'].includes(c.name));
  const number = (numberNode?.text || verb.text).trim();
  call.rec.redirectedTo = number;
  call.ctx.notify();
  const child = call.provider === 'PROVIDER_A' ? twilioId('CA') : uuid();
  const started = Date.now();
  await dialStarted(call, verb, numberNode, child, number);
  await sleep(TRANSFER_TALK_MS);
  const seconds = Math.round((Date.now() - started) / 1000);
  const res = await dialEnded(call, verb, numberNode, child, number, seconds);
  if (res && !call.over && gen === call.generation) {
    await call.followResponse(res, gen);
    return true;
  }
  return false;
}
