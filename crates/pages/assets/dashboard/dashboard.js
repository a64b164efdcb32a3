// The dashboard works without this file. With it, a "Copy" button appears beside a value shown
// once (a new key's), and copies it to the clipboard.
'use strict';

document.querySelectorAll('button[data-copy]').forEach((button) => {
  const field = document.getElementById(button.dataset.copy);
  if (!field || !navigator.clipboard) return;
  button.hidden = false;
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(field.value);
      button.textContent = 'Copied';
    } catch {
      field.select();
      button.textContent = 'Press Ctrl+C to copy';
    }
  });
});
