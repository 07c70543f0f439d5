from ralphsite.api.routers import RalphRouter

router = RalphRouter()
