from django.contrib import admin

admin.site.site_header = "Ralph Site"
admin.site.site_title = "Ralph Site"
admin.site.index_title = "Sessions, conversations and the ledger"
# The site has no public front page: the admin is what people browse.
admin.site.site_url = None
