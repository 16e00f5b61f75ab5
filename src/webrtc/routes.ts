import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { Id, problems } from '../http/index.js';
import type { Logger } from '../lib/logger.js';
import { forwardToOwner } from './forward.js';
import type { WebRtcService } from './service.js';

const LeadParams = Type.Object({ lead_id: Id });

const ANY_PROCESS =
  'Any Dialer process answers: one that does not host the session forwards the request to the one that does (503: that process cannot be reached).';

const IceServer = Type.Object({
  urls: Type.Union([Type.String(), Type.Array(Type.String())]),
  username: Type.Optional(Type.String()),
  credential: Type.Optional(Type.String()),
});

const Offer = Type.Object(
  {
    sdp: Type.String({ minLength: 10, maxLength: 100_000, description: "The client's SDP offer (audio, and a data channel for events)" }),
    type: Type.Optional(Type.Literal('offer')),
  },
  { additionalProperties: false },
);

const Answer = Type.Object({
  type: Type.Literal('answer'),
  sdp: Type.String({ description: "Dialer's SDP answer, its ICE candidates included (no trickle)" }),
  room: Type.String({ description: "The session's room name: the lead's call_id and its recording's name" }),
  ice_servers: Type.Optional(Type.Array(IceServer, { description: 'STUN/TURN servers the client should use too' })),
  agent: Type.Optional(Type.String({ description: 'The agent the session runs: flow (the template), greeter (no LLM is configured), stream' })),
  note: Type.Optional(Type.String({ description: 'Why the session runs another agent than the template (what to configure so it can)' })),
});

const Ended = Type.Object({ status: Type.Literal('ended'), room: Type.String() });

const Speak = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: 5000, description: 'What the agent says' }),
    interrupt: Type.Optional(Type.Boolean({ default: false, description: 'Cut what the agent is saying now instead of queueing behind it' })),
  },
  { additionalProperties: false },
);

const Spoken = Type.Object({ status: Type.Literal('queued'), room: Type.String() });

/** Signalling for browser voice sessions (the WEBRTC execution modes) and WEBRTC_STREAM's tts-speak. */
export function registerWebRtcRoutes(app: App, webrtc: WebRtcService): void {
  /** Runs `here` on the process that carries the lead's session; from any other, the request is forwarded there. */
  const atOwner = async <T>(request: FastifyRequest, leadId: string, reply: FastifyReply, here: () => Promise<T>) => {
    const place = await webrtc.locate(request.principal, leadId);
    return place.here ? here() : forwardToOwner(request, reply, place.ownerUrl, request.log as Logger);
  };
  app.post('/webrtc/:lead_id/offer', {
    config: { permission: ['leads', 'write'] },
    schema: {
      tags: ['webrtc'],
      summary: "Join a WEBRTC, WEBRTC_TEST or WEBRTC_STREAM lead's voice session: SDP offer in, answer out",
      description:
        'Claims the lead (BACKLOG/RETRY -> PROCESSING, call_id = the room name) and answers the offer; the conversation starts when the peer connects. ' +
        'The client opens one data channel for events (transcript, node, function_call, ended) and commands (tts-speak, hangup). ' +
        'Without an LLM and speech-to-text configured, WEBRTC and WEBRTC_TEST sessions run the built-in greeter (the answer\'s `agent` and `note` say so). ' +
        '400: the SDP is not an audio offer. 404: no such lead in scope. 409: the lead is not a WebRTC lead, is already in a session, or is finished. 503: a WEBRTC_STREAM session while speech services are not configured.',
      params: LeadParams,
      body: Offer,
      response: { 200: Answer, ...problems(400, 401, 403, 404, 409, 503) },
    },
    handler: async (request) => webrtc.offer(request.principal, request.params.lead_id, request.body.sdp),
  });

  app.post('/webrtc/:lead_id/ice-restart', {
    config: { permission: ['leads', 'write'] },
    schema: {
      tags: ['webrtc'],
      summary: 'Restart ICE for a live session (the client changed networks): a new offer, a new answer',
      description: `400: not an audio offer. 404: no such lead in scope. 409: no live session for the lead. ${ANY_PROCESS}`,
      params: LeadParams,
      body: Offer,
      response: { 200: Answer, ...problems(400, 401, 403, 404, 409, 503) },
    },
    handler: async (request, reply) => atOwner(request, request.params.lead_id, reply, () => webrtc.restartIce(request.principal, request.params.lead_id, request.body.sdp)),
  });

  app.post('/webrtc/:lead_id/hangup', {
    config: { permission: ['leads', 'write'] },
    schema: {
      tags: ['webrtc'],
      summary: "Hang up a live session; answers once the lead's outcome is recorded",
      description: `404: no such lead in scope. 409: no live session for the lead. ${ANY_PROCESS}`,
      params: LeadParams,
      response: { 200: Ended, ...problems(401, 403, 404, 409, 503) },
    },
    handler: async (request, reply) =>
      atOwner(request, request.params.lead_id, reply, async () => ({ status: 'ended' as const, ...(await webrtc.hangup(request.principal, request.params.lead_id)) })),
  });

  app.post('/leads/:lead_id/tts-speak', {
    config: { permission: ['leads', 'write'] },
    schema: {
      tags: ['webrtc'],
      summary: 'WEBRTC_STREAM: make the agent say `text` in the live session (also a data-channel message {type: "tts-speak", text, interrupt})',
      description: `404: no such lead in scope. 409: the lead has no live session, or is not a WEBRTC_STREAM lead. ${ANY_PROCESS}`,
      params: LeadParams,
      body: Speak,
      response: { 202: Spoken, ...problems(400, 401, 403, 404, 409, 503) },
    },
    handler: async (request, reply) => atOwner(request, request.params.lead_id, reply, async () => {
      const { room } = await webrtc.ttsSpeak(request.principal, request.params.lead_id, request.body.text, request.body.interrupt ?? false);
      return reply.code(202).send({ status: 'queued' as const, room });
    }),
  });
}
