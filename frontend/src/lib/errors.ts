/** errorText is what a rejected façade call says (Wails rejects with the Go error's text). */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
