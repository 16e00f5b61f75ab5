/** "Call a simulated customer": shown while the sandbox line is on (filled in with the sandbox API). */
export function SandboxCall() {
  return null;
}
