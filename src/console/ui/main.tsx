// Entry of the console's single-page app: the query cache, the languages, the app.
import { QueryClient, QueryClientProvider } from '@tanstack/preact-query';
import { render } from 'preact';
import { App } from './app.js';
import { I18nProvider } from './lib/i18n.js';
import { ApiFailure } from './lib/api.js';
import './styles.css';

const client = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 10_000,
      refetchOnWindowFocus: false,
      // Client errors (4xx) are answers, not outages: no retry.
      retry: (count, error) => !(error instanceof ApiFailure && error.status >= 400 && error.status < 500) && count < 2,
    },
  },
});

const root = document.getElementById('app');
if (root) {
  render(
    <QueryClientProvider client={client}>
      <I18nProvider>
        <App />
      </I18nProvider>
    </QueryClientProvider>,
    root,
  );
}
