export type { CallResult, DialRequest, Driver, Drivers } from './driver.js';
export { Telephony, type TelephonyDeps, type TelephonyStatus, type SandboxStatus } from './service.js';
export { registerCallbackRoutes, type CallbackRouteDeps } from './routes.js';
export { attachMediaServer } from './media.js';
export { createKits } from './kits.js';
export * from './provider.js';
export { SipDriver, SIP_PROVIDER, type SipTrunk } from './sip/driver.js';
// The SIP wire (messages, SDP, RTP), for the sandbox line's far side.
export { parseMessage as parseSipMessage, serialize as serializeSip, responseTo as sipResponseTo, header as sipHeader, addressUri as sipAddressUri, type SipRequest, type SipResponse } from './sip/message.js';
export { offer as sdpOffer, readRemote as readRemoteSdp, type Codec } from './sip/sdp.js';
export { bindRtp, RtpStream } from './sip/rtp.js';
