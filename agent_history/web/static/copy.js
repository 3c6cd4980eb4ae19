// Copy buttons: <button data-copy="ID"> copies the text of element #ID (the session page's resume
// command). No inline script: CSP `script-src 'self'`.
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent).then(
    () => {
      button.textContent = "copied";
      setTimeout(() => (button.textContent = "copy"), 1500);
    },
    () => (button.textContent = "copy failed"),
  );
});
