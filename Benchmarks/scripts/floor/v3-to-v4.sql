-- The SQL floor of People v3 -> v4 (the filtered Adult/Child split), as
-- Datasets/People/Mappings/v3-to-v4.json says: AddressToAddress (copy, keys 1…M in source order),
-- PersonToAdult (filter `age >= 18`) then PersonToChild (filter `age < 18`), both in the Person
-- hierarchy's one key sequence (adults first, then children, each in source order), and
-- Person.address rebuilt through the AddressToAddress association. Run in the destination (a new v4
-- store made by `moult create`) with the v3 store attached as `src`.
BEGIN;
-- The association table of AddressToAddress: source address key -> destination address key.
CREATE TEMP TABLE address_map (source INTEGER PRIMARY KEY, destination INTEGER NOT NULL);
INSERT INTO temp.address_map (source, destination)
    SELECT Z_PK, ROW_NUMBER() OVER (ORDER BY Z_PK) FROM src.ZADDRESS ORDER BY Z_PK;
INSERT INTO main.ZADDRESS (Z_PK, Z_ENT, Z_OPT, ZSTATE, ZSTREET)
    SELECT m.destination, (SELECT Z_ENT FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'Address'), 1, a.ZSTATE, a.ZSTREET
    FROM src.ZADDRESS AS a JOIN temp.address_map AS m ON m.source = a.Z_PK ORDER BY a.Z_PK;
UPDATE main.Z_PRIMARYKEY SET Z_MAX = (SELECT COALESCE(MAX(Z_PK), 0) FROM main.ZADDRESS) WHERE Z_NAME = 'Address';
INSERT INTO main.ZPERSON (Z_PK, Z_ENT, Z_OPT, ZAGE, ZNAME, ZADDRESS, ZCOMPANYNAME)
    SELECT ROW_NUMBER() OVER (ORDER BY p.Z_PK),
           (SELECT Z_ENT FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'Adult'),
           1, p.ZAGE, p.ZNAME, m.destination, NULL
    FROM src.ZPERSON AS p LEFT JOIN temp.address_map AS m ON m.source = p.ZADDRESS
    WHERE p.ZAGE >= 18 ORDER BY p.Z_PK;
UPDATE main.Z_PRIMARYKEY SET Z_MAX = (SELECT COALESCE(MAX(Z_PK), 0) FROM main.ZPERSON) WHERE Z_NAME = 'Person';
INSERT INTO main.ZPERSON (Z_PK, Z_ENT, Z_OPT, ZAGE, ZNAME, ZADDRESS, ZSCHOOLNAME)
    SELECT (SELECT Z_MAX FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'Person') + ROW_NUMBER() OVER (ORDER BY p.Z_PK),
           (SELECT Z_ENT FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'Child'),
           1, p.ZAGE, p.ZNAME, m.destination, NULL
    FROM src.ZPERSON AS p LEFT JOIN temp.address_map AS m ON m.source = p.ZADDRESS
    WHERE p.ZAGE < 18 ORDER BY p.Z_PK;
UPDATE main.Z_PRIMARYKEY SET Z_MAX = (SELECT COALESCE(MAX(Z_PK), 0) FROM main.ZPERSON) WHERE Z_NAME = 'Person';
DROP TABLE temp.address_map;
COMMIT;
