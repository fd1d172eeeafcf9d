-- The SQL floor of People v1 -> v3 (v1 -> v2 -> v3): what the sqlite3 shell alone does for the same
-- mapping. Run in the destination (a new v3 store made by `moult create`), with the v1 store attached
-- as `src`. v2 only adds the optional `state` and `street`, which v1 data cannot fill, so no Address
-- is created; persons keep their primary keys, as Moult keeps them, and Person's Z_MAX is the
-- source's (or its largest key, if larger).
BEGIN;
INSERT INTO main.ZPERSON (Z_PK, Z_ENT, Z_OPT, ZAGE, ZNAME, ZADDRESS)
    SELECT Z_PK,
           (SELECT Z_ENT FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'Person'),
           1, ZAGE, ZNAME, NULL
    FROM src.ZPERSON ORDER BY Z_PK;
UPDATE main.Z_PRIMARYKEY SET Z_MAX = max(
    (SELECT COALESCE(MAX(Z_MAX), 0) FROM src.Z_PRIMARYKEY WHERE Z_NAME = 'Person'),
    (SELECT COALESCE(MAX(Z_PK), 0) FROM src.ZPERSON)) WHERE Z_NAME = 'Person';
COMMIT;
