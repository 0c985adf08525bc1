// A modal dialog on the native <dialog> element (focus trapped by the browser, Escape closes it).
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { useT } from '../lib/i18n.js';

export function Dialog({
  title,
  open,
  onClose,
  children,
  testId,
}: {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ComponentChildren;
  testId?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const t = useT();
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    if (open && !el.open) el.showModal?.();
    if (!open && el.open) el.close();
  }, [open]);
  return (
    <dialog ref={ref} class="dialog" aria-labelledby={testId ? `${testId}-title` : undefined} onClose={onClose} data-testid={testId}>
      <h2 id={testId ? `${testId}-title` : undefined}>{title}</h2>
      {open ? children : null}
      <div class="dialog-actions">
        <button type="button" class="btn" onClick={onClose} data-testid="dialog-close">
          {t('action.close')}
        </button>
      </div>
    </dialog>
  );
}

/** A secret shown once (API key, webhook secret, temporary password, recovery codes). */
export function SecretOnce({ label, value, testId }: { label: string; value: string; testId: string }) {
  const t = useT();
  return (
    <div class="secret">
      <p class="warn">{t('secret.once')}</p>
      <p>{label}</p>
      <pre class="secret-value" data-testid={testId}>
        {value}
      </pre>
      <CopyButton value={value} />
    </div>
  );
}

export function CopyButton({ value }: { value: string }) {
  const t = useT();
  const ref = useRef<HTMLButtonElement>(null);
  return (
    <button
      type="button"
      class="btn btn-small"
      ref={ref}
      onClick={() => {
        void navigator.clipboard?.writeText(value).then(() => {
          if (ref.current) ref.current.textContent = t('action.copied');
        });
      }}
    >
      {t('action.copy')}
    </button>
  );
}
