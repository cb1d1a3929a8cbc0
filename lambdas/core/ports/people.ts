/* Who the ids in records are, for people to read: users' emails and API tokens' names. */

/** Display names by id; an id the directory could not find is absent. */
export interface DisplayNames {
  users: ReadonlyMap<string, string>;
  tokens: ReadonlyMap<string, string>;
}

export interface PeopleDirectory {
  /**
   * The emails of these users and the names of these API tokens of `teamId` (a token of another
   * team is not named), in a bounded number of batch reads whatever the number of ids.
   */
  displayNames(
    teamId: string,
    ids: { userIds: readonly string[]; tokenIds: readonly string[] },
  ): Promise<DisplayNames>;
}
