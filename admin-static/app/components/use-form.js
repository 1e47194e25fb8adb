// Form state shared by every dialog and form: field values, per-field errors (cleared as the field
// is edited), a form-level error, and a busy flag while the request runs.
import { useState } from 'preact/hooks';

/**
 * `useForm(initial)` → {values, setValues, errors, setErrors, formError, setFormError, busy, setBusy, set}.
 * `set(name)` is an input handler: it stores the field's value (a checkbox's `checked`) and clears that field's error.
 */
export function useForm(initial) {
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState({});
  const [formError, setFormError] = useState(null);
  const [busy, setBusy] = useState(false);
  const set = (name) => (e) => {
    const value = e.currentTarget.type === 'checkbox' ? e.currentTarget.checked : e.currentTarget.value;
    setValues((v) => ({ ...v, [name]: value }));
    if (errors[name]) setErrors((prev) => ({ ...prev, [name]: undefined }));
  };
  return { values, setValues, errors, setErrors, formError, setFormError, busy, setBusy, set };
}
