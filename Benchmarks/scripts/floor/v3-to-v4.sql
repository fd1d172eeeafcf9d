-- The SQL floor of People v3 -> v4 (the filtered Adult/Child split), as
-- Datasets/People/Mappings/v3-to-v4.json says: AddressToAddress (each address keeps its key),
-- PersonToAdult (filter `age >= 18`) then PersonToChild (filter `age < 18`), each person keeping its
-- key in the Person hierarchy (the filters are disjoint: no key is taken twice), and Person.address
-- kept, through AddressToAddress, as the same key. Each hierarchy's Z_MAX is its source's (or its
-- largest key, if larger), as Moult reserves them. Run in the destination (a new v4 store made by
-- `moult create`) with the v3 store attached as `src`.
BEGIN;
INSERT INTO main.ZADDRESS (Z_PK, Z_ENT, Z_OPT, ZSTATE, ZSTREET)
    SELECT a.Z_PK, (SELECT Z_ENT FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'Address'), 1, a.ZSTATE, a.ZSTREET
    FROM src.ZADDRESS AS a ORDER BY a.Z_PK;
UPDATE main.Z_PRIMARYKEY SET Z_MAX = max(
    (SELECT COALESCE(MAX(Z_MAX), 0) FROM src.Z_PRIMARYKEY WHERE Z_NAME = 'Address'),
    (SELECT COALESCE(MAX(Z_PK), 0) FROM src.ZADDRESS)) WHERE Z_NAME = 'Address';
INSERT INTO main.ZPERSON (Z_PK, Z_ENT, Z_OPT, ZAGE, ZNAME, ZADDRESS, ZCOMPANYNAME)
    SELECT p.Z_PK,
           (SELECT Z_ENT FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'Adult'),
           1, p.ZAGE, p.ZNAME, a.Z_PK, NULL
    FROM src.ZPERSON AS p LEFT JOIN src.ZADDRESS AS a ON a.Z_PK = p.ZADDRESS
    WHERE p.ZAGE >= 18 ORDER BY p.Z_PK;
INSERT INTO main.ZPERSON (Z_PK, Z_ENT, Z_OPT, ZAGE, ZNAME, ZADDRESS, ZSCHOOLNAME)
    SELECT p.Z_PK,
           (SELECT Z_ENT FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'Child'),
           1, p.ZAGE, p.ZNAME, a.Z_PK, NULL
    FROM src.ZPERSON AS p LEFT JOIN src.ZADDRESS AS a ON a.Z_PK = p.ZADDRESS
    WHERE p.ZAGE < 18 ORDER BY p.Z_PK;
UPDATE main.Z_PRIMARYKEY SET Z_MAX = max(
    (SELECT COALESCE(MAX(Z_MAX), 0) FROM src.Z_PRIMARYKEY WHERE Z_NAME = 'Person'),
    (SELECT COALESCE(MAX(Z_PK), 0) FROM src.ZPERSON)) WHERE Z_NAME = 'Person';
COMMIT;
