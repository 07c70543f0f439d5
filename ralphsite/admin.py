from django.contrib import admin

from ralphsite.dashboard import with_dashboard

admin.site.site_header = "Ralph Site"
admin.site.site_title = "Ralph Site"
admin.site.index_title = "Sessions, conversations and the ledger"
# The site has no public front page: the admin is what people browse.
admin.site.site_url = None
# The index page is the dashboard (running sessions, what needs attention, usage charts) above the
# usual app list; app index pages keep Django's own template.
admin.site.index_template = "admin/dashboard.html"
admin.site.index = with_dashboard(admin.site.index)
