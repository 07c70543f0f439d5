'use strict';
// A button that cannot be undone (an operator action with `confirm`, templates/admin/ralphsite/operator_actions.html)
// asks first: its form says what in data-confirm, and nothing is sent unless the person agrees.
document.addEventListener('submit', (event) => {
    const form = event.target;
    if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
        event.preventDefault();
    }
});
