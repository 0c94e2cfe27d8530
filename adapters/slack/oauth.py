"""Installing paperclub in many workspaces through OAuth (SLACK_CLIENT_ID and
SLACK_CLIENT_SECRET): bolt's install flow, the installations and OAuth states it keeps in
paperclub's own database (slack_sdk's SQLAlchemy stores, shared by every HTTP process),
and finding the installation that speaks for a workspace."""

from __future__ import annotations

from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore
from sqlalchemy import desc, select

from adapters.slack.config import INSTALL_PATH, REDIRECT_PATH, SlackSettings, bot_scopes
from bot.app import Services

OAUTH_STATE_SECONDS = 600
# What a member of a workspace that removed the app is told (bolt's authorize error).
NOT_INSTALLED = (
    "paperclub is not installed in this workspace any more: a workspace admin can add it again "
    f"from the install page ({INSTALL_PATH} on this app's host)."
)


def installation_store(services: Services, settings: SlackSettings) -> SQLAlchemyInstallationStore:
    """The workspaces' installations, in paperclub's database (tables made if missing)."""
    installations = SQLAlchemyInstallationStore(client_id=settings.client_id, engine=services.db.engine)
    installations.create_tables()
    return installations


def oauth_settings(services: Services, settings: SlackSettings,
                   installations: SQLAlchemyInstallationStore) -> OAuthSettings:
    """bolt's install flow at INSTALL_PATH, asking for the manifest's scopes."""
    states = SQLAlchemyOAuthStateStore(expiration_seconds=OAUTH_STATE_SECONDS, engine=services.db.engine)
    states.create_tables()
    return OAuthSettings(
        client_id=settings.client_id,
        client_secret=settings.client_secret,
        scopes=bot_scopes(),
        install_path=INSTALL_PATH,
        redirect_uri_path=REDIRECT_PATH,
        installation_store=installations,
        state_store=states,
    )


def find_bot(installations: SQLAlchemyInstallationStore, team_id: str, org: str) -> Bot | None:
    """The workspace's own install; in an Enterprise Grid org, else the org-wide
    install (stored with no team). slack_sdk matches enterprise_id exactly, NULL
    included, so a Grid workspace must be asked for with its org."""
    if org:
        return installations.find_bot(enterprise_id=org, team_id=team_id) or installations.find_bot(
            enterprise_id=org, team_id=None, is_enterprise_install=True
        )
    return installations.find_bot(enterprise_id=None, team_id=team_id) or _any_org(installations, team_id)


def _any_org(installations: SQLAlchemyInstallationStore, team_id: str) -> Bot | None:
    """A channel that has not told us its org yet (it was set up before the org was
    kept): the workspace's newest install under any org."""
    bots = installations.bots
    query = (
        select(bots)
        .where(bots.c.client_id == installations.client_id, bots.c.team_id == team_id,
               bots.c.bot_token.is_not(None))
        .order_by(desc(bots.c.installed_at))
        .limit(1)
    )
    with installations.engine.connect() as connection:
        row = connection.execute(query).mappings().first()
    return None if row is None else installations.build_bot_entity(row)
