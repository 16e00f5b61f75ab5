import { createExotelKit } from './exotel/index.js';
import { createPlivoKit } from './plivo/index.js';
import type { ProviderKit, ProviderSlot } from './provider.js';
import type { TelephonySettings } from '../config/telephony.js';
import { createTwilioKit } from './twilio/index.js';

/** The kits of the providers whose credentials are configured. */
export function createKits(settings: TelephonySettings): Map<ProviderSlot, ProviderKit> {
  const kits = new Map<ProviderSlot, ProviderKit>();
  if (settings.twilio) kits.set('PROVIDER_A', createTwilioKit(settings.twilio));
  if (settings.exotel) kits.set('PROVIDER_B', createExotelKit(settings.exotel));
  if (settings.plivo) kits.set('PROVIDER_C', createPlivoKit(settings.plivo));
  return kits;
}
