-- The SQL floor of People v2 -> v3 (the address split), as Datasets/People/Mappings/v2-to-v3.json
-- says: PersonToPerson (keys 1…N in source order) and PersonToAddress (filter `street != nil OR
-- state != nil`, keys 1…M in source order), then Person.address / Address.residents through the
-- association person -> address. Run in the destination (a new v3 store made by `moult create`) with
-- the v2 store attached as `src`.
BEGIN;
-- The association table of PersonToAddress: source person key -> destination address key.
CREATE TEMP TABLE address_of (person INTEGER PRIMARY KEY, address INTEGER NOT NULL, state, street);
INSERT INTO temp.address_of (person, address, state, street)
    SELECT Z_PK, ROW_NUMBER() OVER (ORDER BY Z_PK), ZSTATE, ZSTREET
    FROM src.ZPERSON WHERE ZSTREET IS NOT NULL OR ZSTATE IS NOT NULL ORDER BY Z_PK;
INSERT INTO main.ZADDRESS (Z_PK, Z_ENT, Z_OPT, ZSTATE, ZSTREET)
    SELECT address, (SELECT Z_ENT FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'Address'), 1, state, street
    FROM temp.address_of ORDER BY address;
INSERT INTO main.ZPERSON (Z_PK, Z_ENT, Z_OPT, ZAGE, ZNAME, ZADDRESS)
    SELECT ROW_NUMBER() OVER (ORDER BY p.Z_PK),
           (SELECT Z_ENT FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'Person'),
           1, p.ZAGE, p.ZNAME, a.address
    FROM src.ZPERSON AS p LEFT JOIN temp.address_of AS a ON a.person = p.Z_PK ORDER BY p.Z_PK;
UPDATE main.Z_PRIMARYKEY SET Z_MAX = (SELECT COALESCE(MAX(Z_PK), 0) FROM main.ZPERSON) WHERE Z_NAME = 'Person';
UPDATE main.Z_PRIMARYKEY SET Z_MAX = (SELECT COALESCE(MAX(Z_PK), 0) FROM main.ZADDRESS) WHERE Z_NAME = 'Address';
DROP TABLE temp.address_of;
COMMIT;
