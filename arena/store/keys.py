"""Every Redis key the arena writes: the only place a ``gz:`` key is spelt.

Keys (all under ``gz:``)::

    gz:seq                          INCR counter: the order of everything listed
    gz:bot:{id}                     hash: a bot (token hash, encrypted signing secrets)
    gz:bots                         zset of bot ids by registration order
    gz:bot-names                    hash: casefolded name -> bot id (names are unique)
    gz:token:{sha256}               string: management-token hash -> bot id
    gz:tournament:{id}              hash: spec (JSON), status, done, total, times, the deal
                                    commitment and the encrypted deal secret
    gz:tournaments                  zset of tournament ids by creation order
    gz:tournament:{id}:matches      zset of match ids
    gz:tournament:{id}:standings    hash: participant id -> standing (JSON)
    gz:tournament:{id}:deals        hash: deal label -> its matches not yet recorded
    gz:tournament:{id}:failed       set of its failed match ids (each match's hash says why)
    gz:match:{id}                   hash: seats (JSON), status, deal label, result (JSON), times,
                                    failure, each seat's rating before and after it (JSON),
                                    the dispute whose ruling voids it ("voiding", set with
                                    the ruling; "voided_by" once applied) and its replacement,
                                    or the match it replaces
    gz:matches                      zset of match ids
    gz:match:{id}:verifications     hash: what the log's verification depends on (SHA-256) ->
                                    the verification's report (JSON)
    gz:bot:{id}:matches             zset of a participant's match ids
    gz:bot:{id}:faults              list of a participant's faults (JSON), newest first, the
                                    last FAULTS_KEPT; written with its match's result
    gz:bot:{id}:divergences         zset: a participant's divergences (match id and seat,
                                    "{match}/{seat}") by what each cost it, in points
    gz:bot:{id}:divergence-entries  hash: "{match}/{seat}" -> that divergence (JSON)
    gz:deals-to-index               set of the deals (JSON [tournament id, deal label]) whose
                                    last match is recorded and whose divergences are not yet
                                    indexed; written with that match's result
    gz:replay:{id}                  string: the packed sealed log of a match recorded before
                                    the archive (arena/archive.py), until `gongzhu
                                    migrate-replays` moves it there
    gz:match:{id} log_sha256, log_bytes   the archived log's name (SHA-256 of the stored
                                    bytes) and size, written with the result
    gz:logs                         set of the archive's blobs that a match references (the
                                    sweep keeps these)
    gz:log-cache:{sha256}           string: a log recently recorded or read from the archive,
                                    whole, after its HMAC binding it to that name; expiring
                                    GONGZHU_REPLAY_CACHE_S after it was written
    gz:logs:held                    hash: SHA-256 -> the stored log the archive could not take
                                    when its match was recorded (written with the result),
                                    until it is moved into the archive
    gz:logs:held:bytes              string: the bytes gz:logs:held holds (its bound:
                                    GONGZHU_ARCHIVE_HOLD_MB)
    gz:heals                        hash: match id -> how often an outage's failure of it was
                                    queued again, and when next (JSON [count, unix seconds])
    gz:rating:{id}                  string: a participant's ladder rating (JSON), of the
                                    version it played last
    gz:rating:{id}:versions         hash: version -> that version's rating (JSON)
    gz:ladder                       zset of participant ids by conservative rating
    gz:rating:{id}:history          list of rating points (JSON), oldest first, of matches
                                    rated before versions were kept (version "")
    gz:rating:{id}:history:{ver}    list of one version's rating points (JSON), oldest first
    gz:ratings:scale                string: the model and scale the stored ratings were made
                                    by (arena.ratings.SCALE; another value: they await
                                    re-rating, arena/store/rerating.py)
    gz:rated                        list: every rated match in the order its result was
                                    recorded (JSON [match id, when]), written with its result
    gz:ratings:changed              INCR counter: rated matches voided by rulings and
                                    re-ratings written (a re-rating started before one
                                    must start again)
    gz:bot:{id}:h2h                 hash: "{opponent}|{figure}" -> a head-to-head counter
                                    (matches, ahead, behind, points, hands), HINCRBY only
    gz:ladder:members               set of the registered bots entered in the ladder
    gz:ladder:tables                zset of the ladder's tables (tournament ids) by creation
    gz:ladder:open                  hash: ladder table not over -> its seats (JSON)
    gz:ladder:lock                  the matchmaker's lock (redis-py's Lock)
    gz:ladder:round                 hash: when the matchmaker last ran, and what it seated
    gz:ladder:passed                hash: registered member -> rounds in a row it had room
                                    and was not seated (rewritten whole by each round)
    gz:gauntlets                    zset of the gauntlets (tournament ids) by creation
    gz:gauntlets:live               hash: gauntlet not over -> who started it
    gz:bot:{id}:gauntlets           zset of the gauntlets a bot is the candidate or baseline of
    gz:gauntlet:{id}:deals          hash: deal number -> that deal's result (JSON), once its
                                    rotations are over
    gz:gauntlet:{id}:lock           a gauntlet's lock while it moves on (redis-py's Lock)
    gz:schedules                    hash: schedule id -> schedule (JSON)
    gz:dispute:{id}                 hash: a dispute (JSON), its evidence report (JSON, written
                                    once), its sealed ruling (JSON)
    gz:disputes                     zset of dispute ids by filing order
    gz:disputes:open                zset of the disputes not yet ruled on
    gz:disputes:claims              hash: "{match}/{hand}/{decision or *}" -> the open dispute
                                    contesting it (one at a time)
    gz:tournament:{id}:rulings      zset of the ruled disputes on a tournament's matches (its
                                    public record)
    gz:bot:{id}:disputes            zset of the disputes its owner filed
    gz:replay-key                   string: the arena's Ed25519 key (PEM) sealing match logs,
                                    kept by the first caller, used when no GONGZHU_REPLAY_KEY
                                    is set (:meth:`arena.context.Arena.replay_key`)
    gz:pull:{bot}:waiting           hash: a pull bot's requests waiting for its answer
                                    (request id -> the stream's line, expiry, order)
    gz:pull:{bot}:answer:{request}  list: the bot's answer, for its asker's BLPOP
    gz:pull:{bot}:closed:{request}  string: why an answered or withdrawn request is closed
    gz:pull:{bot}:connection        INCR counter: the number of the bot's current stream
    gz:pull:connected               zset: pull bot id -> until when its current stream
                                    counts it as connected (unix seconds)
    gz:pull:events                  pub/sub channel: requests, notices and connections of
                                    pull bots, for the web processes holding their streams
    gz:queue:{name}:taken:{worker}  list: the jobs a worker's horse took off rq's queue {name}
                                    and has not yet registered as its own (rq's execution),
                                    given back to the queue if the horse dies first
    gz:queue:{name}:takers          set of the workers taking jobs into such lists (a dead
                                    worker's is given back by the registry sweep)
    gz:human-bots                   set of the bot ids whose owners allow human games
    gz:play:{id}                    hash: a human game's settings, version and progress
    gz:play:{id}:moves              list of its decisions (replay-log JSON), oldest first;
                                    both expire HUMAN_GAME_TTL_S after the game's last write
"""

from __future__ import annotations

SEQ = "gz:seq"
BOTS = "gz:bots"
BOT_NAMES = "gz:bot-names"
TOURNAMENTS = "gz:tournaments"
MATCHES = "gz:matches"
LADDER = "gz:ladder"
RATINGS_SCALE = "gz:ratings:scale"
RATED = "gz:rated"
RATINGS_CHANGED = "gz:ratings:changed"
"""Counts what makes a re-rating under way start again: a rated match voided, another
re-rating written."""
RATING_PATTERN = "gz:rating:*"
"""Every key of the ratings (``SCAN MATCH``), for their re-rating."""
LADDER_MEMBERS = "gz:ladder:members"
LADDER_TABLES = "gz:ladder:tables"
LADDER_OPEN = "gz:ladder:open"
LADDER_LOCK = "gz:ladder:lock"
LADDER_ROUND = "gz:ladder:round"
LADDER_PASSED = "gz:ladder:passed"
GAUNTLETS = "gz:gauntlets"
GAUNTLETS_LIVE = "gz:gauntlets:live"
SCHEDULES = "gz:schedules"
REPLAY_KEY = "gz:replay-key"
HUMAN_BOTS = "gz:human-bots"
PULL_CONNECTED = "gz:pull:connected"
PULL_EVENTS = "gz:pull:events"
DEALS_TO_INDEX = "gz:deals-to-index"
DISPUTES = "gz:disputes"
DISPUTES_OPEN = "gz:disputes:open"
DISPUTE_CLAIMS = "gz:disputes:claims"
LOGS = "gz:logs"
HELD_LOGS = "gz:logs:held"
HELD_BYTES = "gz:logs:held:bytes"
HEALS = "gz:heals"
REPLAY_PATTERN = "gz:replay:*"
"""The keys of the logs still kept in Redis (``SCAN MATCH``), for their migration."""

FAULTS_KEPT = 10_000
"""A participant's fault index keeps its latest faults, this many (its pages show 50 each)."""
HUMAN_GAME_TTL_S = 30 * 24 * 3600
"""An abandoned human game is forgotten a month after its last move."""


def bot(bot_id: str) -> str:
    return f"gz:bot:{bot_id}"


def token(token_hash: str) -> str:
    return f"gz:token:{token_hash}"


def tournament(tournament_id: str) -> str:
    return f"gz:tournament:{tournament_id}"


def tournament_matches(tournament_id: str) -> str:
    return f"gz:tournament:{tournament_id}:matches"


def standings(tournament_id: str) -> str:
    return f"gz:tournament:{tournament_id}:standings"


def unfinished_deals(tournament_id: str) -> str:
    return f"gz:tournament:{tournament_id}:deals"


def gauntlet_deals(tournament_id: str) -> str:
    return f"gz:gauntlet:{tournament_id}:deals"


def gauntlet_lock(tournament_id: str) -> str:
    return f"gz:gauntlet:{tournament_id}:lock"


def failed(tournament_id: str) -> str:
    return f"gz:tournament:{tournament_id}:failed"


def match(match_id: str) -> str:
    return f"gz:match:{match_id}"


def verifications(match_id: str) -> str:
    return f"gz:match:{match_id}:verifications"


def bot_matches(bot_id: str) -> str:
    return f"gz:bot:{bot_id}:matches"


def bot_gauntlets(bot_id: str) -> str:
    return f"gz:bot:{bot_id}:gauntlets"


def faults(bot_id: str) -> str:
    return f"gz:bot:{bot_id}:faults"


def divergences(bot_id: str) -> str:
    return f"gz:bot:{bot_id}:divergences"


def divergence_entries(bot_id: str) -> str:
    return f"gz:bot:{bot_id}:divergence-entries"


def replay(match_id: str) -> str:
    return f"gz:replay:{match_id}"


def replay_match_id(key: bytes) -> str:
    """The match id of a key :data:`REPLAY_PATTERN` found."""
    return key.decode().removeprefix("gz:replay:")


def log_cache(digest: str) -> str:
    return f"gz:log-cache:{digest}"


def rating(bot_id: str) -> str:
    return f"gz:rating:{bot_id}"


def rating_versions(bot_id: str) -> str:
    return f"gz:rating:{bot_id}:versions"


def history(bot_id: str, version: str) -> str:
    return f"gz:rating:{bot_id}:history" + (f":{version}" if version else "")


def head_to_head(bot_id: str) -> str:
    return f"gz:bot:{bot_id}:h2h"


def play(game_id: str) -> str:
    return f"gz:play:{game_id}"


def play_moves(game_id: str) -> str:
    return f"gz:play:{game_id}:moves"


def pull_waiting(bot_id: str) -> str:
    return f"gz:pull:{bot_id}:waiting"


def pull_answer(bot_id: str, request_id: str) -> str:
    return f"gz:pull:{bot_id}:answer:{request_id}"


def pull_closed(bot_id: str, request_id: str) -> str:
    return f"gz:pull:{bot_id}:closed:{request_id}"


def pull_connection(bot_id: str) -> str:
    return f"gz:pull:{bot_id}:connection"


def dispute(dispute_id: str) -> str:
    return f"gz:dispute:{dispute_id}"


def tournament_rulings(tournament_id: str) -> str:
    return f"gz:tournament:{tournament_id}:rulings"


def bot_disputes(bot_id: str) -> str:
    return f"gz:bot:{bot_id}:disputes"


def taken(queue_name: str, worker_name: str) -> str:
    return f"gz:queue:{queue_name}:taken:{worker_name}"


def takers(queue_name: str) -> str:
    return f"gz:queue:{queue_name}:takers"
