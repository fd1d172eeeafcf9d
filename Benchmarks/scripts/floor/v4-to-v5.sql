-- The SQL floor of People v4 -> v5 (unique companies and schools by name), as
-- Datasets/People/BuiltinPolicy/v4-to-v5.json says (and v4-to-v5.json with the People policies):
-- AddressToAddress (copy, each address keeping its key), AdultToAdult then ChildToChild (each person
-- keeping its key; Address's and Person's Z_MAX the source's, or its largest key), AdultToCompany
-- (one Company per distinct companyName, keys in the order of each name's first adult, `business`
-- "makes phones" for Apple and the model's default "makes stuff" otherwise) and ChildToSchool (one
-- School per distinct schoolName, likewise); each adult related to its company, each child to its
-- school, and every person to its address through the AddressToAddress association. Run in the
-- destination (a new v5 store made by `moult create`) with the v4 store attached as `src`.
BEGIN;
-- The association table of AddressToAddress: each address keeps its key.
CREATE TEMP TABLE address_map (source INTEGER PRIMARY KEY, destination INTEGER NOT NULL);
INSERT INTO temp.address_map (source, destination) SELECT Z_PK, Z_PK FROM src.ZADDRESS ORDER BY Z_PK;
INSERT INTO main.ZADDRESS (Z_PK, Z_ENT, Z_OPT, ZSTATE, ZSTREET)
    SELECT m.destination, (SELECT Z_ENT FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'Address'), 1, a.ZSTATE, a.ZSTREET
    FROM src.ZADDRESS AS a JOIN temp.address_map AS m ON m.source = a.Z_PK ORDER BY a.Z_PK;
UPDATE main.Z_PRIMARYKEY SET Z_MAX = max(
    (SELECT COALESCE(MAX(Z_MAX), 0) FROM src.Z_PRIMARYKEY WHERE Z_NAME = 'Address'),
    (SELECT COALESCE(MAX(Z_PK), 0) FROM src.ZADDRESS)) WHERE Z_NAME = 'Address';
-- The unique companies and schools: one per name, numbered in the order of the name's first holder.
CREATE TEMP TABLE company_map (name TEXT PRIMARY KEY, destination INTEGER NOT NULL);
INSERT INTO temp.company_map (name, destination)
    SELECT ZCOMPANYNAME, ROW_NUMBER() OVER (ORDER BY MIN(Z_PK))
    FROM src.ZPERSON WHERE Z_ENT = (SELECT Z_ENT FROM src.Z_PRIMARYKEY WHERE Z_NAME = 'Adult') AND ZCOMPANYNAME IS NOT NULL
    GROUP BY ZCOMPANYNAME;
INSERT INTO main.ZCOMPANY (Z_PK, Z_ENT, Z_OPT, ZBUSINESS, ZNAME)
    SELECT destination, (SELECT Z_ENT FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'Company'), 1,
           CASE name WHEN 'Apple' THEN 'makes phones' ELSE 'makes stuff' END, name
    FROM temp.company_map ORDER BY destination;
UPDATE main.Z_PRIMARYKEY SET Z_MAX = (SELECT COALESCE(MAX(Z_PK), 0) FROM main.ZCOMPANY) WHERE Z_NAME = 'Company';
CREATE TEMP TABLE school_map (name TEXT PRIMARY KEY, destination INTEGER NOT NULL);
INSERT INTO temp.school_map (name, destination)
    SELECT ZSCHOOLNAME, ROW_NUMBER() OVER (ORDER BY MIN(Z_PK))
    FROM src.ZPERSON WHERE Z_ENT = (SELECT Z_ENT FROM src.Z_PRIMARYKEY WHERE Z_NAME = 'Child') AND ZSCHOOLNAME IS NOT NULL
    GROUP BY ZSCHOOLNAME;
INSERT INTO main.ZSCHOOL (Z_PK, Z_ENT, Z_OPT, ZNAME)
    SELECT destination, (SELECT Z_ENT FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'School'), 1, name
    FROM temp.school_map ORDER BY destination;
UPDATE main.Z_PRIMARYKEY SET Z_MAX = (SELECT COALESCE(MAX(Z_PK), 0) FROM main.ZSCHOOL) WHERE Z_NAME = 'School';
-- The persons, each keeping its key, with its address and its company or school.
INSERT INTO main.ZPERSON (Z_PK, Z_ENT, Z_OPT, ZAGE, ZNAME, ZADDRESS, ZCOMPANY)
    SELECT p.Z_PK,
           (SELECT Z_ENT FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'Adult'),
           1, p.ZAGE, p.ZNAME, m.destination, c.destination
    FROM src.ZPERSON AS p
    LEFT JOIN temp.address_map AS m ON m.source = p.ZADDRESS
    LEFT JOIN temp.company_map AS c ON c.name = p.ZCOMPANYNAME
    WHERE p.Z_ENT = (SELECT Z_ENT FROM src.Z_PRIMARYKEY WHERE Z_NAME = 'Adult') ORDER BY p.Z_PK;
INSERT INTO main.ZPERSON (Z_PK, Z_ENT, Z_OPT, ZAGE, ZNAME, ZADDRESS, ZSCHOOL)
    SELECT p.Z_PK,
           (SELECT Z_ENT FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'Child'),
           1, p.ZAGE, p.ZNAME, m.destination, s.destination
    FROM src.ZPERSON AS p
    LEFT JOIN temp.address_map AS m ON m.source = p.ZADDRESS
    LEFT JOIN temp.school_map AS s ON s.name = p.ZSCHOOLNAME
    WHERE p.Z_ENT = (SELECT Z_ENT FROM src.Z_PRIMARYKEY WHERE Z_NAME = 'Child') ORDER BY p.Z_PK;
UPDATE main.Z_PRIMARYKEY SET Z_MAX = max(
    (SELECT COALESCE(MAX(Z_MAX), 0) FROM src.Z_PRIMARYKEY WHERE Z_NAME IN ('Person', 'Adult', 'Child')),
    (SELECT COALESCE(MAX(Z_PK), 0) FROM src.ZPERSON)) WHERE Z_NAME = 'Person';
DROP TABLE temp.address_map;
DROP TABLE temp.company_map;
DROP TABLE temp.school_map;
COMMIT;
