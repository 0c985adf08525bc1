// A button that asks before it acts: opens a dialog with the consequences and a confirm button.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useT } from '../lib/i18n.js';
import { Dialog } from './dialog.js';
import { ErrorBox } from './states.js';

export function ConfirmButton({
  label,
  title,
  children,
  onConfirm,
  pending,
  error,
  testId,
  danger,
}: {
  label: string;
  title: string;
  children: ComponentChildren;
  onConfirm: () => Promise<unknown>;
  pending: boolean;
  error: unknown;
  testId: string;
  danger?: boolean;
}) {
  const t = useT();
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" class={danger ? 'btn btn-danger' : 'btn'} onClick={() => setOpen(true)} data-testid={testId}>
        {label}
      </button>
      <Dialog title={title} open={open} onClose={() => setOpen(false)} testId={`${testId}-dialog`}>
        {children}
        {error ? <ErrorBox error={error} /> : null}
        <button
          type="button"
          class={danger ? 'btn btn-danger' : 'btn btn-primary'}
          disabled={pending}
          data-testid={`${testId}-confirm`}
          onClick={() => {
            void onConfirm().then(
              () => setOpen(false),
              () => {},
            );
          }}
        >
          {t('action.confirm')}
        </button>
      </Dialog>
    </>
  );
}
