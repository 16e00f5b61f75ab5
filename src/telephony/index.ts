export type { CallEnd, CallResult, DialRequest, Driver, Drivers } from './driver.js';
