// What every page component receives from the app's router.
import type { AuthState } from './auth.js';

export interface PageProps {
  me: AuthState;
  /** Route segments after the page name, e.g. ['cs_1'] for #/payments/cs_1. */
  params: string[];
}
