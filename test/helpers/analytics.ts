/** What the analytics exactness tests share: callers at three scopes and a seeded random source. */
import type { Principal } from '../../src/auth/index.js';

export const ADMIN: Principal = { kind: 'user', id: 'a', label: 'admin', role: 'admin', resellerId: null, merchantId: null };
export const R1: Principal = { kind: 'user', id: 'r1', label: 'reseller', role: 'reseller', resellerId: 'r1', merchantId: null };
export const M1: Principal = { kind: 'user', id: 'm1', label: 'merchant', role: 'merchant', resellerId: 'r1', merchantId: 'm1' };

/** mulberry32: the same pseudo-random numbers in [0, 1) on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
