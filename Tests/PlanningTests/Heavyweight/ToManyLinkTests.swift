import Testing
import Mapping
import ObjectModel
@testable import Planning

/// The stage-2 SQL of links kept outside their row's column, pinned as exact text: a
/// many-to-many filled from both sides of its join table (one ordered), and an ordered
/// one-to-many set from its to-many side in the inverse's column.
@Suite struct ToManyLinkTests {
    static let entities = """
        Playlist: {attributes: {name: string}, relationships: {songs: {destination: Song, inverse: playlists, toMany: true, ordered: true}}}
        Song: {attributes: {name: string}, relationships: {playlists: {destination: Playlist, inverse: songs, toMany: true}, album: {destination: Album, inverse: songs}}}
        Album: {attributes: {name: string}, relationships: {songs: {destination: Song, inverse: album, toMany: true, ordered: true}}}
        """

    /// Copies of every entity from `entities` to `destination`.
    static func step(to destination: String = entities) throws -> PlannedStep {
        let mapping = MappingModel(source: "Music 1", destination: "Music 2", entityMappings: ["Playlist", "Song", "Album"].map { (entity: String) in
            EntityMappingDefinition(name: entity + "To" + entity, type: .copy, sourceEntity: entity, destinationEntity: entity)
        }, file: "music.yaml")
        typealias V = HeavyweightMigrationTests
        return try HeavyweightMigration.step(mapping: mapping, from: V.version("Music 1", entities), to: V.version("Music 2", destination), schema: "shop")
    }

    @Test func theOrderedSideOfAJoinTableInsertsItsPairsWithTheSourcePositions() throws {
        #expect(HeavyweightMigrationTests.sql(try Self.step(), "stage 2, PlaylistToPlaylist: Playlist.songs in playlist__songs through SongToSong from $source.songs") == """
            INSERT INTO "shop~staging"."playlist__songs" ("playlist_pk", "songs_pk", "songs_order")
            SELECT a.destination_pk, a2.destination_pk, (row_number() OVER (PARTITION BY a.destination_pk ORDER BY "s.songs"."songs_order", a2.source_pk) - 1)::integer
            FROM "shop~staging"."_association" AS a
            JOIN "shop"."playlist" AS s ON s._pk = a.source_pk
            JOIN "shop"."playlist__songs" AS "s.songs" ON "s.songs"."playlist_pk" = "s"."_pk"
            JOIN "shop~staging"."_association" AS a2 ON a2.entity_mapping = 'SongToSong' AND a2.source_pk = "s.songs"."songs_pk"
            WHERE a.entity_mapping = 'PlaylistToPlaylist'
            ON CONFLICT ("playlist_pk", "songs_pk") DO UPDATE SET "songs_order" = EXCLUDED."songs_order"
            """)
    }

    @Test func theSideNotOwningAJoinTableReadsAndFillsItFromTheOtherColumn() throws {
        #expect(HeavyweightMigrationTests.sql(try Self.step(), "stage 2, SongToSong: Song.playlists in playlist__songs through PlaylistToPlaylist from $source.playlists") == """
            INSERT INTO "shop~staging"."playlist__songs" ("songs_pk", "playlist_pk")
            SELECT a.destination_pk, a2.destination_pk
            FROM "shop~staging"."_association" AS a
            JOIN "shop"."song" AS s ON s._pk = a.source_pk
            JOIN "shop"."playlist__songs" AS "s.playlists" ON "s.playlists"."songs_pk" = "s"."_pk"
            JOIN "shop~staging"."_association" AS a2 ON a2.entity_mapping = 'PlaylistToPlaylist' AND a2.source_pk = "s.playlists"."playlist_pk"
            WHERE a.entity_mapping = 'SongToSong'
            ON CONFLICT ("songs_pk", "playlist_pk") DO NOTHING
            """)
    }

    @Test func anOrderedOneToManySetsTheInverseColumnWhereEmptyOrAgreeingAfterEveryToOne() throws {
        let step = try Self.step()
        let summary = "stage 2, AlbumToAlbum: Album.songs in song.album_pk through SongToSong from $source.songs"
        #expect(HeavyweightMigrationTests.sql(step, summary) == """
            UPDATE "shop~staging"."song" AS d SET "album_pk" = p.owner_pk, "album_order" = p.position
            FROM (SELECT DISTINCT ON (a2.destination_pk) a.destination_pk AS owner_pk, a2.destination_pk AS linked_pk, (row_number() OVER (PARTITION BY a.destination_pk ORDER BY "s.songs"."album_order", a2.source_pk) - 1)::integer AS position
            FROM "shop~staging"."_association" AS a
            JOIN "shop"."album" AS s ON s._pk = a.source_pk
            JOIN "shop"."song" AS "s.songs" ON "s.songs"."album_pk" = "s"."_pk"
            JOIN "shop~staging"."_association" AS a2 ON a2.entity_mapping = 'SongToSong' AND a2.source_pk = "s.songs"."_pk"
            WHERE a.entity_mapping = 'AlbumToAlbum'
            ORDER BY a2.destination_pk, a.destination_pk) AS p
            WHERE d._pk = p.linked_pk AND (d."album_pk" IS NULL OR d."album_pk" = p.owner_pk)
            """)
        // The to-one side's column is set first (by SongToSong's INSERT, the songs keeping
        // their keys), so it wins where the two sides disagree.
        let summaries = step.statements.map(\.summary)
        let toOne = try #require(summaries.firstIndex(of: "stage 1, SongToSong: insert Song rows with their attributes and album_pk, keeping their keys"))
        #expect(toOne < (summaries.firstIndex(of: summary) ?? -1))
    }

    @Test func anOrderedToManyNoMappingMapsIsNumberedFromItsToOneSideByKey() throws {
        // Album.tracks has no source relationship of its name, hence no default.
        let step = try Self.step(to: Self.entities.replacingOccurrences(of: "Album: {attributes: {name: string}, relationships: {songs:", with: "Album: {attributes: {name: string}, relationships: {tracks:")
            .replacingOccurrences(of: "inverse: songs}", with: "inverse: tracks}"))
        #expect(HeavyweightMigrationTests.sql(step, "stage 2, SongToSong: song.album_order, positions by key") == """
            UPDATE "shop~staging"."song" AS d SET "album_order" = p.position
            FROM (SELECT _pk, (row_number() OVER (PARTITION BY "album_pk" ORDER BY _pk) - 1)::integer AS position
                  FROM "shop~staging"."song" WHERE "album_pk" IS NOT NULL ORDER BY _pk) AS p
            WHERE d._pk = p._pk AND d."album_order" IS DISTINCT FROM p.position
            """)
        // Statistics of the table stage 1 filled first, and the positions sorted by key again:
        // the update merge-joins with the primary key rather than writing pages at random.
        let summaries = step.statements.map(\.summary)
        let statistics = try #require(summaries.firstIndex(of: "stage 2, SongToSong: statistics of song for its positions"))
        #expect(step.statements[statistics].sql.text == #"ANALYZE "shop~staging"."song""#)
        #expect(summaries.firstIndex(of: "stage 2, SongToSong: song.album_order, positions by key") == statistics + 1)
        // Mapped from its to-many side, the positions come from there.
        #expect(!(try Self.step()).statements.contains { $0.summary.hasSuffix("positions by key") })
    }
}
