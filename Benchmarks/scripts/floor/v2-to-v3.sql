-- The SQL floor of People v2 -> v3 (the address split), as Datasets/People/Mappings/v2-to-v3.json
-- says: PersonToPerson (each person keeps its key) and PersonToAddress (filter `street != nil OR
-- state != nil`; each address has the key of the person it is made from, the only objects of its
-- hierarchy), then Person.address / Address.residents through the association person -> address.
-- Both hierarchies' Z_MAX are the source Person's (or its largest key, if larger), as Moult reserves
-- them. Run in the destination (a new v3 store made by `moult create`) with the v2 store attached as `src`.
BEGIN;
INSERT INTO main.ZADDRESS (Z_PK, Z_ENT, Z_OPT, ZSTATE, ZSTREET)
    SELECT Z_PK, (SELECT Z_ENT FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'Address'), 1, ZSTATE, ZSTREET
    FROM src.ZPERSON WHERE ZSTREET IS NOT NULL OR ZSTATE IS NOT NULL ORDER BY Z_PK;
INSERT INTO main.ZPERSON (Z_PK, Z_ENT, Z_OPT, ZAGE, ZNAME, ZADDRESS)
    SELECT p.Z_PK,
           (SELECT Z_ENT FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'Person'),
           1, p.ZAGE, p.ZNAME, CASE WHEN p.ZSTREET IS NOT NULL OR p.ZSTATE IS NOT NULL THEN p.Z_PK END
    FROM src.ZPERSON AS p ORDER BY p.Z_PK;
UPDATE main.Z_PRIMARYKEY SET Z_MAX = max(
    (SELECT COALESCE(MAX(Z_MAX), 0) FROM src.Z_PRIMARYKEY WHERE Z_NAME = 'Person'),
    (SELECT COALESCE(MAX(Z_PK), 0) FROM src.ZPERSON)) WHERE Z_NAME IN ('Person', 'Address');
COMMIT;
