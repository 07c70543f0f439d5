'use strict';
// SessionFilter (ralphsite/core/service_admin.py): choosing a session in the autocomplete reloads the
// list with ?session=<id> (the other filters kept, back to page 1); clearing it removes the filter.
{
    const $ = django.jQuery;
    $(function() {
        $('.rl-session-filter-select').on('change', function() {
            const params = new URLSearchParams(window.location.search);
            params.delete('p');
            if (this.value) {
                params.set(this.dataset.parameter, this.value);
            } else {
                params.delete(this.dataset.parameter);
            }
            window.location.search = params.toString();
        });
    });
}
