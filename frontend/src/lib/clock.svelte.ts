// One shared clock for relative times: it ticks every 20 s so "2 min ago" stays true.
// It reads no data from the core.
export const now = $state({ value: new Date() });

if (typeof window !== 'undefined') {
  setInterval(() => {
    now.value = new Date();
  }, 20_000);
}
