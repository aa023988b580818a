/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

export default defineConfig(({ mode }) => ({
  plugins: [svelte()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // WebKitGTK 2.40+ (Debian 12) and current Chromium.
    target: 'es2022',
  },
  // Component tests mount Svelte in jsdom: use Svelte's browser build there.
  resolve: mode === 'test' ? { conditions: ['browser'] } : {},
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'jsdom',
  },
}));
