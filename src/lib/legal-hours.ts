/**
 * Calling hours set by law, by jurisdiction: the hours of the recipient's local day in which a
 * call to a number of that jurisdiction may be placed. A configuration names the jurisdictions it
 * applies (`legal_hours: ['US', 'IN']`); each applies to the numbers of its own countries, on top
 * of the configuration's own window (see `legalHold` in windows.ts, and docs/compliance.md).
 *
 * To extend: add a row. `countries` are ISO 3166-1 alpha-2 codes of the numbers it covers (as
 * libphonenumber reads them from the number); `zones` are the IANA zones of the jurisdiction: the
 * recipient's own zone is the one its number tells, and when it tells none (a toll-free or
 * non-geographic number) the hours must hold in every zone listed.
 */
export interface LegalHours {
  /** What the rule is, for the documentation and the reason a lead waits. */
  basis: string;
  countries: readonly string[];
  /** HH:MM, 24-hour, recipient local time; end exclusive. */
  start: string;
  end: string;
  zones: readonly string[];
}

export const LEGAL_HOURS = {
  // 47 CFR 64.1200(c)(1): no telephone solicitation before 8 a.m. or after 9 p.m. (called party's local time).
  US: {
    basis: 'TCPA, 47 CFR 64.1200(c)(1)',
    countries: ['US'],
    start: '08:00',
    end: '21:00',
    zones: [
      'America/New_York', 'America/Chicago', 'America/Denver', 'America/Phoenix', 'America/Los_Angeles',
      'America/Anchorage', 'Pacific/Honolulu',
    ],
  },
  // TRAI's Telecom Commercial Communications Customer Preference Regulations: commercial calls 09:00-21:00.
  IN: { basis: 'TRAI TCCCPR 2018', countries: ['IN'], start: '09:00', end: '21:00', zones: ['Asia/Kolkata'] },
  // Ofcom's guidance on persistent misuse and the DMA code: marketing calls 08:00-21:00.
  GB: { basis: 'Ofcom / DMA code', countries: ['GB'], start: '08:00', end: '21:00', zones: ['Europe/London'] },
  // Canada's CRTC Unsolicited Telecommunications Rules: weekdays 09:00-21:30 (weekend hours are shorter; the weekday hours here).
  CA: {
    basis: 'CRTC Unsolicited Telecommunications Rules',
    countries: ['CA'],
    start: '09:00',
    end: '21:30',
    zones: ['America/St_Johns', 'America/Halifax', 'America/Toronto', 'America/Winnipeg', 'America/Edmonton', 'America/Vancouver'],
  },
  // Australia's Do Not Call Register (Telemarketing) Industry Standard: 09:00-20:00 on weekdays.
  AU: {
    basis: 'Telemarketing and Research Industry Standard 2017',
    countries: ['AU'],
    start: '09:00',
    end: '20:00',
    zones: ['Australia/Sydney', 'Australia/Brisbane', 'Australia/Adelaide', 'Australia/Darwin', 'Australia/Perth'],
  },
} as const satisfies Record<string, LegalHours>;

export type Jurisdiction = keyof typeof LEGAL_HOURS;
export const JURISDICTIONS = Object.keys(LEGAL_HOURS) as Jurisdiction[];
