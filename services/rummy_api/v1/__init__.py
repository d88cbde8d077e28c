"""``rummy_api.v1``: generated modules of ``proto/rummy_api/v1/game_service.proto``."""
