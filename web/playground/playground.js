// Dialer playground: log in, pick a template, fill its variables, call over WebRTC, watch the
// transcript, node path and function calls live, hang up, play the recording. Plain JS, no build.
const API = location.pathname.replace(/\/playground\/?$/, '');
const CALL_VARIABLES = new Set(['lead_id', 'call_id', 'request_id', 'template', 'execution_mode', 'attempt_count', 'customer_mobile_number', 'from_number', 'to_number', 'call_direction']);
const $ = (id) => document.getElementById(id);

/** State, exposed for tests and the curious (window.playground). */
const state = { token: sessionStorage.getItem('dialer.token'), templates: [], leadId: null, room: null, pc: null, channel: null, events: [], lead: null };
window.playground = state;

async function api(method, path, body) {
  const res = await fetch(`${API}${path}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(state.token ? { authorization: `Bearer ${state.token}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = res.headers.get('content-type')?.includes('json') ? await res.json() : await res.text();
  if (!res.ok) throw new Error(data?.detail ?? `${method} ${path}: ${res.status}`);
  return data;
}

function setStatus(text) {
  $('status').textContent = text;
}

// ---- login

$('login-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    const res = await api('POST', '/login', { email: $('email').value, password: $('password').value });
    state.token = res.access_token;
    sessionStorage.setItem('dialer.token', state.token);
    await loggedIn(res.user.email);
  } catch (err) {
    $('who').textContent = `Login failed: ${err.message}`;
  }
});

async function loggedIn(email) {
  $('login-section').hidden = true;
  $('call-section').hidden = false;
  if (email) $('who').textContent = `Logged in as ${email}`;
  const list = await api('GET', '/templates?page_size=1000');
  state.templates = list.data;
  const select = $('template');
  select.replaceChildren(...state.templates.map((t) => new Option(t.name, t.id)));
  if (state.templates.length === 0) {
    // Nothing to call yet: say so instead of showing an empty list and a Call button that cannot work.
    select.replaceChildren(new Option('No templates yet: create one with POST /templates (see /docs)', ''));
    select.disabled = true;
    $('call-button').disabled = true;
  }
  showVariables();
}

// ---- template variables

function variablesOf(flow) {
  const names = new Set();
  const scan = (text) => {
    for (const m of String(text ?? '').matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) if (!CALL_VARIABLES.has(m[1])) names.add(m[1]);
  };
  for (const node of flow?.nodes ?? []) {
    for (const msg of [...(node.role_messages ?? []), ...(node.task_messages ?? [])]) scan(msg.content);
    for (const action of [...(node.pre_actions ?? []), ...(node.post_actions ?? [])]) scan(action.text);
  }
  return [...names];
}

function showVariables() {
  const template = state.templates.find((t) => t.id === $('template').value);
  const fieldset = $('variables');
  for (const el of [...fieldset.querySelectorAll('.variable')]) el.remove();
  const names = template ? variablesOf(template.flow) : [];
  $('no-variables').hidden = names.length > 0;
  for (const name of names) {
    const label = Object.assign(document.createElement('label'), { htmlFor: `var-${name}`, textContent: name, className: 'variable' });
    const input = Object.assign(document.createElement('input'), { id: `var-${name}`, name, required: true, className: 'variable' });
    input.dataset.variable = name;
    fieldset.append(label, input);
  }
}

$('template').addEventListener('change', showVariables);
$('mode').addEventListener('change', () => {
  $('speak-form').hidden = $('mode').value !== 'WEBRTC_STREAM' || !state.leadId;
  $('override').disabled = $('mode').value !== 'WEBRTC_TEST';
});

// ---- the call

$('call-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const template = state.templates.find((t) => t.id === $('template').value);
  if (!template) return;
  const mode = $('mode').value;
  const payload = {};
  for (const input of document.querySelectorAll('input[data-variable]')) payload[input.dataset.variable] = input.value;
  let override;
  if (mode === 'WEBRTC_TEST' && $('override').value.trim()) {
    try {
      override = JSON.parse($('override').value);
    } catch {
      setStatus('The configuration override is not valid JSON.');
      return;
    }
  }
  $('call-button').disabled = true;
  resetLive();
  try {
    setStatus('Creating the lead…');
    const pushed = await api('POST', '/leads', {
      request_id: `playground-${Date.now()}`,
      template: template.name,
      reseller_id: template.reseller_id,
      ...(template.merchant_id ? { merchant_id: template.merchant_id } : {}),
      payload,
      execution_mode: mode,
      is_playground: mode === 'WEBRTC_TEST',
      ...(override ? { configurations_override: override } : {}),
    });
    state.leadId = pushed.lead_call_tracker_id;
    setStatus('Starting the microphone…');
    const mic = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } });
    await connect(mic);
  } catch (err) {
    setStatus(`Call failed: ${err.message}`);
    $('call-button').disabled = false;
  }
});

async function connect(mic) {
  setStatus('Connecting…');
  const pc = new RTCPeerConnection({ iceServers: [] });
  state.pc = pc;
  for (const track of mic.getAudioTracks()) pc.addTrack(track, mic);
  pc.ontrack = (event) => {
    $('remote').srcObject = event.streams[0] ?? new MediaStream([event.track]);
    $('remote').play().catch(() => undefined);
  };
  const channel = pc.createDataChannel('dialer');
  state.channel = channel;
  channel.onmessage = (event) => onEvent(JSON.parse(event.data));
  pc.onconnectionstatechange = () => {
    if (pc.connectionState === 'failed') setStatus('The connection failed.');
  };
  await pc.setLocalDescription(await pc.createOffer());
  await gathered(pc);
  const answer = await api('POST', `/webrtc/${state.leadId}/offer`, { sdp: pc.localDescription.sdp });
  state.room = answer.room;
  if (answer.ice_servers?.length) pc.setConfiguration({ iceServers: answer.ice_servers });
  await pc.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
  $('hangup-button').disabled = false;
  $('speak-form').hidden = $('mode').value !== 'WEBRTC_STREAM';
}

function gathered(pc) {
  return new Promise((resolve) => {
    if (pc.iceGatheringState === 'complete') return resolve();
    const timer = setTimeout(resolve, 3000);
    pc.addEventListener('icegatheringstatechange', () => {
      if (pc.iceGatheringState === 'complete') {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

$('hangup-button').addEventListener('click', async () => {
  $('hangup-button').disabled = true;
  setStatus('Hanging up…');
  try {
    await api('POST', `/webrtc/${state.leadId}/hangup`);
  } catch (err) {
    setStatus(`Hang-up: ${err.message}`);
  }
  await ended();
});

$('speak-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const text = $('speak-text').value.trim();
  if (!text || state.channel?.readyState !== 'open') return;
  state.channel.send(JSON.stringify({ type: 'tts-speak', text, interrupt: $('speak-interrupt').checked }));
  $('speak-text').value = '';
});

// ---- live events

let interim = null;

function onEvent(event) {
  state.events.push(event);
  switch (event.type) {
    case 'state':
      setStatus(`Connected (room ${event.room}). Speak now.`);
      break;
    case 'transcript': {
      if (event.role === 'user' && !event.final) {
        interim ??= addLine('user interim', '');
        interim.textContent = event.text;
        break;
      }
      if (event.role === 'user' && interim) {
        interim.remove();
        interim = null;
      }
      addLine(event.role, event.text);
      break;
    }
    case 'node':
      $('nodes').append(Object.assign(document.createElement('li'), { textContent: event.node }));
      break;
    case 'function_call':
      $('functions').append(
        Object.assign(document.createElement('li'), {
          textContent: `${event.name}(${JSON.stringify(event.arguments)})${event.transition_to ? ` → ${event.transition_to}` : ''}`,
        }),
      );
      break;
    case 'ended':
      setStatus(`Ended: ${event.outcome} (ended by ${event.call_ended_by}).`);
      void ended();
      break;
  }
}

function addLine(role, text) {
  const li = Object.assign(document.createElement('li'), { className: role, textContent: text });
  $('transcript').append(li);
  return li;
}

function resetLive() {
  $('live-section').hidden = false;
  $('result').hidden = true;
  for (const id of ['transcript', 'nodes', 'functions']) $(id).replaceChildren();
  state.events = [];
  state.lead = null;
  interim = null;
  ending = null;
}

let ending = null;

/** The session is over: close the peer, wait for the lead's outcome, offer the recording. */
function ended() {
  ending ??= (async () => {
    $('hangup-button').disabled = true;
    $('speak-form').hidden = true;
    let lead;
    for (let i = 0; i < 100; i++) {
      lead = await api('GET', `/leads/${state.leadId}`);
      if (lead.status !== 'PROCESSING') break;
      await new Promise((r) => setTimeout(r, 300));
    }
    state.pc?.close();
    state.lead = lead;
    $('result').hidden = false;
    $('outcome').textContent = `Lead ${lead.id}: ${lead.status}, outcome ${lead.outcome ?? '(none)'}, ${lead.duration_seconds ?? 0} s.`;
    if (lead.recording_url) {
      const res = await fetch(lead.recording_url, { headers: { authorization: `Bearer ${state.token}` } });
      if (res.ok) $('recording').src = URL.createObjectURL(await res.blob());
    }
    $('call-button').disabled = false;

  })();
  return ending;
}

if (state.token) loggedIn().catch(() => {
  state.token = null;
  sessionStorage.removeItem('dialer.token');
  $('login-section').hidden = false;
  $('call-section').hidden = true;
});
